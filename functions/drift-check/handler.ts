/**
 * `drift-check`: a ServingRuntime or ClusterServingRuntime changed, or a revision was
 * deleted. Evaluates every pinned InferenceService that uses it and updates
 * `RuntimeDrifted`; roll-forwards and re-renders go through the pin use-case. In a
 * delegate cluster upstream OME reports drift, and the plane reports what it wrote.
 */
import { MetricUnit } from '../../shared/app/metrics';
import { createLogger } from '../../shared/app/logger';
import { forClusterMode } from '../../shared/app/cluster-mode';
import { runAsSweep } from '../../shared/app/context';
import { lazyEventPublisher } from '../../shared/app/event-publisher';
import { createHintHandler } from '../../shared/app/hint-handler';
import { pinningDepsOf, republishHint } from '../../shared/app/pinning-deps';
import { reportDelegatedRuntimeChange } from '../../shared/use-cases/delegate';
import { checkRuntimeDrift } from '../../shared/use-cases/pinning';

const publisherOf = lazyEventPublisher(createLogger('drift-check'));

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
    const continueLater = republishHint(invocation, () => publisherOf(invocation.app.config));
    return forClusterMode(invocation.cluster, {
      standalone: async () => {
        const deps = { ...pinningDepsOf(invocation), continuations: invocation.app.stores.continuations, continueLater };
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
