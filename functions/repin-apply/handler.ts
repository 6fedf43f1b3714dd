/**
 * repin-apply: applies `ome.io/rollout-repin` requests, passes `ome.io/rollout-promote`
 * to the step machine, and restates plan status when a RolloutPolicy changes. In a
 * delegate cluster upstream OME consumes those annotations: the plane leaves them and
 * reports.
 */
import { forClusterMode } from '../../shared/app/cluster-mode';
import { createHintHandler } from '../../shared/app/hint-handler';
import { DELEGATED, reportDelegatedInferenceService } from '../../shared/use-cases/delegate';
import { createRepinMetrics, handleRepinApplyHint } from '../../shared/app/rollout-hints';
import { metricsBindingWiring } from '../../shared/app/metrics-binding';

export const handler = createHintHandler(
  async (invocation) => {
    const { hint } = invocation;
    const result = await forClusterMode(invocation.cluster, {
      // Plans resolve with the cluster's metrics binding, as rollout-run's do; nothing samples here.
      standalone: () =>
        handleRepinApplyHint(invocation, createRepinMetrics(invocation.metrics), metricsBindingWiring(invocation.app.config.prometheusAddress)),
      delegate: async () =>
        hint.kind === 'InferenceService' && hint.namespace
          ? reportDelegatedInferenceService(invocation.cluster.client, { namespace: hint.namespace, name: hint.name, uid: hint.uid })
          : { delegated: DELEGATED, ignored: `${hint.kind} ${hint.change}` },
    });
    invocation.logger.info('repin-apply done', { result });
    return result;
  },
  { serviceName: 'repin-apply' },
);
