/**
 * rollout-run: advances rollout runs on InferenceService changes and on readiness changes
 * of the Deployments we render (hints from its queue), and sweeps every active run once a
 * minute for timed pauses and analysis samples (its schedule). Analysis steps sample the
 * cluster's Prometheus (see shared/app/analysis-wiring.ts). In a delegate cluster
 * upstream OME runs the rollouts and their analysis: a hint reports its run and hold,
 * nothing samples, and the sweep passes the cluster by.
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext } from '../../shared/app/logger';
import type { Context, SQSEvent } from 'aws-lambda';
import { lazyEventPublisher } from '../../shared/app/event-publisher';
import { getAppContext, runWithinInvocation } from '../../shared/app/context';
import { forClusterMode } from '../../shared/app/cluster-mode';
import { createHintHandler } from '../../shared/app/hint-handler';
import { metricsFenceOf } from '../../shared/app/config';
import { DELEGATED, reportDelegatedInferenceService } from '../../shared/use-cases/delegate';
import { handleRolloutRunHint, sweepRolloutRuns } from '../../shared/app/rollout-hints';
import { prometheusAnalysisWiring, wiringPerInvocation } from '../../shared/app/analysis-wiring';

const SERVICE_NAME = 'rollout-run';
const logger = createLogger(SERVICE_NAME);
// Asks for a render when a held sequence group's turn begins.
const publisherOf = lazyEventPublisher(logger);
// The cluster's analysis configuration, read once per invocation by this function's identity,
// sampled under the plane's network fence (mode and ANALYSIS_SOURCE_ALLOWLIST); AWS sources
// are signed with this function's role.
const analysisOf = wiringPerInvocation(() => {
  const { config } = getAppContext();
  return prometheusAnalysisWiring({
    sampling: true,
    fallbackAddress: config.prometheusAddress,
    fence: metricsFenceOf(config),
    awsRegion: config.region,
  });
});

const onHint = createHintHandler(
  async (invocation) => {
    const { hint } = invocation;
    const result = await forClusterMode(invocation.cluster, {
      standalone: () => handleRolloutRunHint(invocation, publisherOf(invocation.app.config), analysisOf(invocation.requestId.split('/')[0] ?? invocation.requestId)),
      delegate: async () =>
        hint.kind === 'InferenceService' && hint.namespace
          ? reportDelegatedInferenceService(invocation.cluster.client, { namespace: hint.namespace, name: hint.name, uid: hint.uid })
          : { delegated: DELEGATED, ignored: `${hint.kind} ${hint.change}` },
    });
    // One INFO line when a run moved; a hint with nothing to advance is a detail (DEBUG).
    const acted = 'outcome' in result && (result.outcome === 'advanced' || result.outcome === 'closed');
    if (acted || 'delegated' in result) invocation.logger.info('rollout-run done', { result });
    else invocation.logger.debug('rollout-run: nothing to advance', { result });
    return result;
  },
  { serviceName: SERVICE_NAME },
);

// A failed sweep is rethrown: Lambda retries it (maximumRetryAttempts), then dead-letters it; the next runs in a minute.
const onSchedule = middy(async (_event: unknown, context: Context) => {
  const app = getAppContext();
  const summary = await runWithinInvocation(context, () => sweepRolloutRuns(app, context.awsRequestId, publisherOf(app.config), analysisOf(context.awsRequestId), { publisher: publisherOf(app.config), logger }));
  logger.info('swept rollout runs', { summary });
  return summary;
}).use(injectLambdaContext(logger));

/** Hints come from the hint queue as an SQS batch; the schedule invokes with a Scheduled Event. */
export async function handler(event: SQSEvent | { source?: string; 'detail-type'?: string }, context: Context): Promise<unknown> {
  if ('Records' in event) return onHint(event, context);
  return onSchedule(event, context);
}
