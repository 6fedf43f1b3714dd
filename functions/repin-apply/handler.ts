/**
 * repin-apply: applies `ome.io/rollout-repin` requests, passes `ome.io/rollout-promote`
 * to the step machine, and restates plan status when a RolloutPolicy changes.
 */
import { createHintHandler } from '../../shared/app/hint-handler';
import { createRepinMetrics, handleRepinApplyHint } from '../../shared/rollout-runs';

export const handler = createHintHandler(
  async (invocation) => {
    const result = await handleRepinApplyHint(invocation, createRepinMetrics(invocation.metrics));
    invocation.logger.info('repin-apply done', { result });
    return result;
  },
  { serviceName: 'repin-apply' },
);
