/**
 * Fleet-wide drift: which InferenceServices report RuntimeDrifted, in which cluster and why.
 * Read from status as the cluster's controller (upstream's in delegate clusters, the plane's
 * in standalone ones) wrote it. The resync builds one report per cluster from the pages it
 * lists anyway, so reporting costs no extra reads; `kubectl ome admin fleet drift` prints them.
 */
import type { InferenceService } from '../model/inference-service';
import { normalizeRuntimeKind } from '../runtime/revision';
import { Annotation, ConditionType } from '../vocabulary';

/** Rows kept per cluster: a report stays far below DynamoDB's 400 KB item limit. */
export const MAX_DRIFT_ROWS = 500;

export interface FleetDriftRow {
  namespace: string;
  name: string;
  runtimeKind: string;
  runtime: string;
  pinnedRevision: string;
  reason: string;
  message: string;
  /** The object's `ome.io/runtime-sync` value, when it has one (truncated to 100 characters). */
  syncToken?: string;
}

export interface FleetDriftReport {
  clusterId: string;
  /** When the cluster was listed (epoch ms). */
  observedAt: number;
  /** InferenceServices seen. */
  inferenceServices: number;
  /** InferenceServices drifting, including those beyond the kept rows. */
  drifted: number;
  rows: FleetDriftRow[];
  /** Why the cluster could not be listed, when it could not. */
  error?: string;
}

const MAX_TOKEN_SHOWN = 100;

/** The drift row of an InferenceService that reports RuntimeDrifted=True; undefined otherwise. */
export function toDriftRow(isvc: InferenceService): FleetDriftRow | undefined {
  const condition = (isvc.status?.conditions ?? []).find((c) => c.type === ConditionType.runtimeDrifted && c.status === 'True');
  if (!condition) return undefined;
  const token = isvc.metadata.annotations?.[Annotation.runtimeSync];
  return {
    namespace: isvc.metadata.namespace ?? '',
    name: isvc.metadata.name,
    runtimeKind: normalizeRuntimeKind(isvc.spec?.runtime?.kind),
    runtime: isvc.spec?.runtime?.name ?? '',
    pinnedRevision: isvc.status?.pinnedRevisionName ?? '',
    reason: condition.reason ?? '',
    message: condition.message ?? '',
    ...(token ? { syncToken: token.length > MAX_TOKEN_SHOWN ? `${token.slice(0, MAX_TOKEN_SHOWN)}…` : token } : {}),
  };
}

/** Accumulates one cluster's report page by page. */
export class DriftReportBuilder {
  private seen = 0;
  private drifted = 0;
  private readonly rows: FleetDriftRow[] = [];

  constructor(private readonly clusterId: string) {}

  add(isvcs: readonly InferenceService[]): void {
    for (const isvc of isvcs) {
      this.seen += 1;
      const row = toDriftRow(isvc);
      if (!row) continue;
      this.drifted += 1;
      if (this.rows.length < MAX_DRIFT_ROWS) this.rows.push(row);
    }
  }

  build(observedAt: number, error?: string): FleetDriftReport {
    const rows = [...this.rows].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
    return { clusterId: this.clusterId, observedAt, inferenceServices: this.seen, drifted: this.drifted, rows, ...(error === undefined ? {} : { error }) };
  }
}
