import { assertOwnedDeployment, createDirectWorkloadWriter, workloadOwnerOf } from '../pinning/direct-workload-writer';
import type { Clock } from '../ports/clock';
import type { ClusterClient } from '../ports/cluster';
import type { EngineWorkloadWriter } from '../ports/workloads';
import { fenceDeploymentWrites } from './fenced-deployments';
import { createRolloutWorkloadWriter } from './rollout-workload-writer';
import { getOptional } from './workloads';

/**
 * The engine workload writer the functions use: an engine in a rollout group rolls out
 * through a run; everything else is written directly. Only Deployments the InferenceService
 * owns are touched: a same-named Deployment of anyone else's fails the apply before any
 * run opens (UnownedDeploymentError), and every later Deployment write checks again.
 */
export const rolloutAwareWorkloadWriter =
  (clock: Clock) =>
  (client: ClusterClient): EngineWorkloadWriter => {
    const direct = createDirectWorkloadWriter(client);
    return {
      async apply(request) {
        const owner = workloadOwnerOf(request.isvc);
        const { namespace = '', name } = request.desired.metadata;
        const stable = await getOptional(client, namespace, name);
        if (stable) assertOwnedDeployment(stable, owner);
        // The rollout writer fences its own writes; this wrapper adds the ownership check only.
        const owned = fenceDeploymentWrites(client, undefined, owner);
        return createRolloutWorkloadWriter({ client: owned, direct, clock }).apply(request);
      },
    };
  };
