/**
 * Whether the plane is a cluster's controller or works beside upstream OME's own. Named in
 * the cluster's registry record (`mode`), read once where a record is used, and decided in
 * one place per function (`forClusterMode`, shared/app/cluster-mode.ts):
 *
 * - `standalone`: no OME controller runs in the cluster. The plane decides pins and rollout
 *   runs, writes InferenceService status and renders workloads.
 * - `delegate`: upstream OME (v1.3 and later) runs there; it pins, runs rollouts, renders and
 *   replaces status whole on every write (../../docs/architecture.md, "Two modes"). The plane
 *   never writes InferenceService status, never renders, never runs its GC and never consumes
 *   an annotation upstream consumes; it acts only through upstream's levers
 *   (shared/use-cases/delegate/levers.ts) and reads upstream's status to report.
 */
import { InvalidInputError } from './errors';

/**
 * Who controls the cluster's OME objects: `standalone`, the plane (no OME controller runs
 * there); `delegate`, upstream OME's own controller, beside which the plane only pulls
 * upstream's levers and reads its status.
 */
export type ClusterMode = 'standalone' | 'delegate';

/** The values a record's `mode` may hold, each with what it means for an operator. */
export const CLUSTER_MODES: Readonly<Record<ClusterMode, string>> = {
  standalone: 'no OME controller runs in the cluster; the plane renders and writes status',
  delegate: "OME's controller runs there; the plane acts through annotations and spec.runtime.revision",
};

/** A registry record whose `mode` is missing or not one of CLUSTER_MODES: terminal until an operator fixes the record. */
export class ClusterModeError extends InvalidInputError {
  readonly clusterId: string;

  constructor(clusterId: string, found: unknown) {
    super(formatClusterModeProblem(clusterId, found));
    this.name = 'ClusterModeError';
    this.clusterId = clusterId;
  }
}

/** The refusal's text: which cluster, what was found, and the two values to choose from. */
export function formatClusterModeProblem(clusterId: string, found: unknown): string {
  const what = found === undefined || found === null || found === '' ? 'has no mode in its registry record' : `has mode ${JSON.stringify(found)} in its registry record, which is not a mode`;
  return `cluster ${JSON.stringify(clusterId)} ${what}; set "mode" to "standalone" (${CLUSTER_MODES.standalone}) or "delegate" (${CLUSTER_MODES.delegate})`;
}

/** The mode a raw value names, or undefined when it names none (case and spacing count: the record is data). */
export function parseClusterMode(value: unknown): ClusterMode | undefined {
  return value === 'standalone' || value === 'delegate' ? value : undefined;
}

/**
 * The mode of a record as stored. Records are read from a table that older versions wrote
 * without a mode, so the type's promise is checked here, where every use of a record starts.
 */
export function clusterModeOf(record: { id: string; mode?: unknown }): ClusterMode {
  const mode = parseClusterMode(record.mode);
  if (mode === undefined) throw new ClusterModeError(record.id, record.mode);
  return mode;
}
