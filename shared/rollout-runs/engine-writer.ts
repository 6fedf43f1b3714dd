import { createDirectWorkloadWriter } from '../pinning/direct-workload-writer';
import type { Clock } from '../ports/clock';
import type { ClusterClient } from '../ports/cluster';
import type { EngineWorkloadWriter } from '../ports/workloads';
import { createRolloutWorkloadWriter } from './rollout-workload-writer';

/**
 * The engine workload writer the functions use: an engine in a rollout group rolls out
 * through a run; everything else is written directly.
 */
export const rolloutAwareWorkloadWriter =
  (clock: Clock) =>
  (client: ClusterClient): EngineWorkloadWriter =>
    createRolloutWorkloadWriter({ client, direct: createDirectWorkloadWriter(client), clock });
