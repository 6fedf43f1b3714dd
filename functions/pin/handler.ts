/**
 * `pin`: an InferenceService was added, changed or relisted. Pins it to a runtime
 * revision (or follows its live runtime), reports drift and renders its engine workload.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createHintHandler } from '../../shared/app/hint-handler';
import { createPinningDeps, pinInferenceService } from '../../shared/pinning';
import { rolloutAwareWorkloadWriter } from '../../shared/rollout-runs';

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const deps = createPinningDeps(invocation, rolloutAwareWorkloadWriter(invocation.app.clock));
    const result = await pinInferenceService(deps, { namespace: hint.namespace ?? '', name: hint.name, uid: hint.uid });
    if (result.statusWritten) metrics.addMetric('PinStatusWrites', MetricUnit.Count, 1);
    if (result.tokenApplied !== undefined) metrics.addMetric('RuntimeSyncApplied', MetricUnit.Count, 1);
    logger.info('InferenceService reconciled', { result });
    return result;
  },
  { serviceName: 'pin' },
);
