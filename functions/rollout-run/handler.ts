/**
 * rollout-run: advances rollout runs on InferenceService changes and on readiness changes
 * of the Deployments we render, and sweeps every active run once a minute for timed pauses.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import { getAppContext } from '../../shared/app/context';
import { createHintHandler } from '../../shared/app/hint-handler';
import { handleRolloutRunHint, sweepRolloutRuns } from '../../shared/rollout-runs';

const SERVICE_NAME = 'rollout-run';
const logger = new Logger({ serviceName: SERVICE_NAME });

const onHint = createHintHandler(
  async (invocation) => {
    const result = await handleRolloutRunHint(invocation);
    invocation.logger.info('rollout-run done', { result });
    return result;
  },
  { serviceName: SERVICE_NAME },
);

// A failed sweep is not retried (the next one runs in a minute); it is logged and rethrown.
const onSchedule = middy(async (_event: unknown, context: Context) => {
  const summary = await sweepRolloutRuns(getAppContext(), context.awsRequestId);
  logger.info('swept rollout runs', { summary });
  return summary;
}).use(injectLambdaContext(logger));

export async function handler(event: { source?: string; 'detail-type'?: string }, context: Context): Promise<unknown> {
  if (event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event') return onSchedule(event, context);
  return onHint(event as Parameters<typeof onHint>[0], context);
}
