/**
 * `drift-check`: a ServingRuntime or ClusterServingRuntime changed, or a revision was
 * deleted. Evaluates every pinned InferenceService that uses it and updates
 * `RuntimeDrifted`; roll-forwards and re-renders go through the pin use-case. In a
 * delegate cluster upstream OME reports drift, and the plane reports what it wrote.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { forClusterMode } from '../../shared/app/cluster-mode';
import { createHintHandler } from '../../shared/app/hint-handler';
import { reportDelegatedRuntimeChange } from '../../shared/delegate';
import { checkRuntimeDrift, createPinningDeps } from '../../shared/pinning';
import { rolloutAwareWorkloadWriter } from '../../shared/rollout-runs';

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const trigger = { kind: hint.kind, name: hint.name, change: hint.change, ...(hint.namespace === undefined ? {} : { namespace: hint.namespace }) };
    return forClusterMode(invocation.cluster, {
      standalone: async () => {
        const deps = createPinningDeps(invocation, rolloutAwareWorkloadWriter(invocation.app.clock));
        const report = await checkRuntimeDrift(deps, trigger);
        metrics.addMetric('DriftStatusWrites', MetricUnit.Count, report.statusWrites);
        metrics.addMetric('DriftPinsDelegated', MetricUnit.Count, report.pinned);
        logger.info('drift checked', { report });
        return report;
      },
      delegate: async () => {
        const report = await reportDelegatedRuntimeChange(invocation.cluster.client, trigger);
        metrics.addMetric('DelegatedDriftReported', MetricUnit.Count, report.reports.filter((entry) => entry.state.drift !== undefined).length);
        logger.info('drift reported', { report });
        return report;
      },
    });
  },
  { serviceName: 'drift-check' },
);
