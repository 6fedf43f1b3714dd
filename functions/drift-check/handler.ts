/**
 * `drift-check`: a ServingRuntime or ClusterServingRuntime changed, or a revision was
 * deleted. Evaluates every pinned InferenceService that uses it and updates
 * `RuntimeDrifted`; roll-forwards and re-renders go through the pin use-case.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createHintHandler } from '../../shared/app/hint-handler';
import { checkRuntimeDrift, createPinningDeps } from '../../shared/pinning';
import { rolloutAwareWorkloadWriter } from '../../shared/rollout-runs';

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const deps = createPinningDeps(invocation, rolloutAwareWorkloadWriter(invocation.app.clock));
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
