/**
 * `drift-check`: a ServingRuntime or ClusterServingRuntime changed, or a revision was
 * deleted. Evaluates every pinned InferenceService that uses it and updates
 * `RuntimeDrifted`; roll-forwards and re-renders go through the pin use-case. In a
 * delegate cluster upstream OME reports drift, and the plane reports what it wrote.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { Logger } from '@aws-lambda-powertools/logger';
import { lazyEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { forClusterMode } from '../../shared/domain/cluster-mode';
import { runAsSweep } from '../../shared/app/context';
import { createHintHandler } from '../../shared/app/hint-handler';
import { reportDelegatedRuntimeChange } from '../../shared/use-cases/delegate';
import { UnavailableError } from '../../shared/domain/errors';
import { HINT_EVENT_SOURCE, HintDetailType } from '../../shared/domain/hint-event';
import { checkRuntimeDrift, createPinningDeps } from '../../shared/use-cases/pinning';
import { rolloutAwareWorkloadWriter } from '../../shared/use-cases/rollout-runs';
import { metricsBindingReader } from '../../shared/use-cases/rollout-runs/analysis-wiring';

const publisherOf = lazyEventPublisher(new Logger({ serviceName: 'drift-check' }));

export const handler = createHintHandler(
  async (invocation) => {
    const { hint, logger, metrics } = invocation;
    const trigger = {
      kind: hint.kind,
      name: hint.name,
      change: hint.change,
      ...(hint.namespace === undefined ? {} : { namespace: hint.namespace }),
      ...(typeof hint.continuation === 'number' ? { continuation: hint.continuation } : {}),
    };
    // A fan-out out of time publishes the same hint again, carrying its continuation's version.
    const continueLater = async (next: { continuation?: number }): Promise<void> => {
      const result = await publisherOf(invocation.app.config).publish([
        { source: HINT_EVENT_SOURCE, detailType: HintDetailType.objectChanged, detail: { ...hint, ...(next.continuation === undefined ? {} : { continuation: next.continuation }) } },
      ]);
      if (result.published !== 1) throw new UnavailableError(`drift check: the continuation hint of ${hint.kind} ${hint.name} was not published`);
    };
    return forClusterMode(invocation.cluster, {
      standalone: async () => {
        const deps = { ...createPinningDeps(invocation, rolloutAwareWorkloadWriter(invocation.app.clock, metricsBindingReader(invocation.cluster, invocation.app.config.prometheusAddress))), continuations: invocation.app.stores.continuations, continueLater };
        // A sweep: its cluster requests yield to user work (docs/decisions.md).
        const report = await runAsSweep(() => checkRuntimeDrift(deps, trigger));
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
