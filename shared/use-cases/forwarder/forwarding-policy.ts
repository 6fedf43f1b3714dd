import { decideForwarding } from '../../domain/hint-event';
import type { ForwardingDecision, ObservedChange } from '../../domain/hint-event';
import type { KubeObject } from '../../ports/cluster';
import { digestWorkloadReadiness } from './object-memory';
import type { RememberedObject } from './object-memory';

/**
 * `decideForwarding`, plus one rule of the forwarder's own: a rendered Deployment whose
 * readiness moved is forwarded even though only its status changed. Our functions never
 * write a Deployment's status, so this cannot feed their writes back to them.
 */
export function decideObservedChange(
  change: ObservedChange,
  object: KubeObject,
  previous: KubeObject | undefined,
  remembered: RememberedObject | undefined,
): ForwardingDecision {
  const decision = decideForwarding(change, object, previous);
  if (decision.forward || previous === undefined || remembered === undefined) return decision;
  if (previous.metadata.resourceVersion === object.metadata.resourceVersion) return decision;
  const readiness = digestWorkloadReadiness(object);
  if (readiness !== undefined && readiness !== remembered.readiness) {
    return { forward: true, reason: 'workload readiness changed' };
  }
  return decision;
}
