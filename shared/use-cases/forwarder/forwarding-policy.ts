import { decideForwarding } from '../../domain/hint-event';
import type { ForwardingDecision, ObservedChange } from '../../domain/hint-event';
import { WorkloadLabel } from '../../domain/vocabulary';
import type { KubeObject } from '../../ports/cluster';
import { digestWorkloadReadiness } from './object-memory';
import type { RememberedObject } from './object-memory';

/** A decision, and for a Deployment whether its readiness moved (the hint's `changed.ready`). */
export type ObservedDecision = ForwardingDecision & { readinessMoved?: boolean };

/**
 * `decideForwarding`, narrowed to what a function acts on for the two kinds the plane
 * writes itself (docs/events.md, "What is forwarded"):
 * - a rendered Deployment in a rollout group (labelled `ome.io/rollout-grouped`, see
 *   `markRolloutGrouped`) is forwarded when first seen and when its readiness moved, which
 *   the API server's workload controller writes, although only its status changed; its
 *   spec and metadata are ours (each render), no function acts on its delete, and no run
 *   waits on a Deployment outside every group;
 * - a ControllerRevision only when deleted (drift-check reports the pins it breaks); the
 *   revisions are created by pin and collected by revision-gc's sweep, not on a hint.
 */
export function decideObservedChange(
  change: ObservedChange,
  object: KubeObject,
  previous: KubeObject | undefined,
  remembered: RememberedObject | undefined,
): ObservedDecision {
  const decision = decideForwarding(change, object, previous);
  if (object.kind === 'ControllerRevision') {
    return change === 'DELETED' || !decision.forward ? decision : { forward: false, reason: 'a revision matters only when deleted' };
  }
  if (object.kind !== 'Deployment') return decision;
  if (change === 'DELETED') return { forward: false, reason: 'no function acts on a deleted workload' };
  if (object.metadata.labels?.[WorkloadLabel.rolloutGrouped] !== 'true') return { forward: false, reason: 'a workload outside every rollout group: no run waits on it' };
  const known = previous !== undefined && remembered !== undefined && previous.metadata.uid === object.metadata.uid;
  if (!known) return decision;
  if (previous.metadata.resourceVersion === object.metadata.resourceVersion) return decision;
  const readiness = digestWorkloadReadiness(object);
  if (readiness !== undefined && readiness !== remembered.readiness) {
    return { forward: true, reason: 'workload readiness changed', readinessMoved: true };
  }
  return { forward: false, reason: 'only our render moved (spec or metadata); readiness is unchanged' };
}
