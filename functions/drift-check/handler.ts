/**
 * `drift-check`: a ServingRuntime or ClusterServingRuntime changed, or a revision was
 * deleted. Evaluates every pinned InferenceService that uses it and updates
 * `RuntimeDrifted`; roll-forwards and re-renders go through the pin use-case.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createHintHandler } from '../../shared/app/hint-handler';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { EngineWorkloadWriter } from '../../shared/ports/workloads';
import { checkRuntimeDrift, createDirectWorkloadWriter, createPinningDeps } from '../../shared/pinning';
import { createRolloutWorkloadWriter } from '../../shared/rollout-runs';
import type { Clock } from '../../shared/ports/clock';

/** Engines in a rollout group roll out through a run; everything else is written directly. */
const rolloutAwareWriter =
  (clock: Clock) =>
  (client: ClusterClient): EngineWorkloadWriter =>
    createRolloutWorkloadWriter({ client, direct: createDirectWorkloadWriter(client), clock });

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const deps = createPinningDeps(invocation, rolloutAwareWriter(invocation.app.clock));
    const report = await checkRuntimeDrift(deps, {
      kind: hint.kind,
      name: hint.name,
      change: hint.change,
      ...(hint.namespace === undefined ? {} : { namespace: hint.namespace }),
    });
    metrics.addMetric('DriftStatusWrites', MetricUnit.Count, report.statusWrites);
    metrics.addMetric('DriftPinsDelegated', MetricUnit.Count, report.pinned);
    logger.info('drift checked', { report });
    return report;
  },
  { serviceName: 'drift-check' },
);
