/**
 * `pin`: an InferenceService was added, changed or relisted. In a standalone cluster, pins
 * it to a runtime revision (or follows its live runtime), reports drift and renders its
 * engine workload; in a delegate cluster upstream OME does all that, and the plane reports
 * what upstream wrote.
 */
import { MetricUnit } from '../../shared/app/metrics';
import { forClusterMode } from '../../shared/app/cluster-mode';
import { createHintHandler } from '../../shared/app/hint-handler';
import { reportDelegatedInferenceService } from '../../shared/use-cases/delegate';
import { pinningDepsOf } from '../../shared/app/pinning-deps';
import { pinInferenceService } from '../../shared/use-cases/pinning';

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const target = { namespace: hint.namespace ?? '', name: hint.name, uid: hint.uid };
    return forClusterMode(invocation.cluster, {
      standalone: async () => {
        const deps = pinningDepsOf(invocation);
        const result = await pinInferenceService(deps, target);
        if (result.statusWritten) metrics.addMetric('PinStatusWrites', MetricUnit.Count, 1);
        if (result.tokenApplied !== undefined) metrics.addMetric('RuntimeSyncApplied', MetricUnit.Count, 1);
        logger.info('InferenceService reconciled', { result });
        return result;
      },
      delegate: async () => {
        const report = await reportDelegatedInferenceService(invocation.cluster.client, target);
        logger.info('InferenceService reported', { report });
        return report;
      },
    });
  },
  { serviceName: 'pin' },
);
