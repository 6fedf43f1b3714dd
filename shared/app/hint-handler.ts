/**
 * The wiring every event-driven function shares: a middy handler that takes an
 * EventBridge delivery of a hint event, gives the use-case its dependencies, logs with
 * the object's identity, and maps the outcome onto Lambda's retry contract: a terminal
 * error is logged and acknowledged (redelivery would fail the same way), a retryable one
 * is rethrown so EventBridge/Lambda deliver again and, in the end, dead-letter it.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { isRetryable } from '../errors';
import type { EventBridgeEnvelope, HintDetail } from '../events/hint-event';
import type { AppContext, ClusterHandle } from './context';
import { getAppContext } from './context';
import { publishMetrics } from './publish-metrics';

export interface HintInvocation {
  hint: HintDetail;
  app: AppContext;
  cluster: ClusterHandle;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this worker in lease records. */
  requestId: string;
}

export type HintUseCase<R> = (invocation: HintInvocation) => Promise<R>;

export interface HintHandlerOptions {
  serviceName: string;
  /** Overrides the process context (the local control plane passes its own). */
  context?: () => AppContext;
}

/** Wraps a use-case as a Lambda handler for hint events. */
export function createHintHandler<R>(useCase: HintUseCase<R>, options: HintHandlerOptions) {
  const logger = new Logger({ serviceName: options.serviceName });
  const metrics = new Metrics({ serviceName: options.serviceName, namespace: 'OmePinning' });
  const appOf = options.context ?? (() => getAppContext());

  const run = async (event: EventBridgeEnvelope<HintDetail>, context: Context): Promise<R | undefined> => {
    const hint = event.detail;
    logger.appendKeys({ cluster: hint.clusterId, kind: hint.kind, namespace: hint.namespace, name: hint.name });
    try {
      const app = appOf();
      const cluster = await app.cluster(hint.clusterId);
      return await useCase({ hint, app, cluster, logger, metrics, requestId: context.awsRequestId });
    } catch (error) {
      if (isRetryable(error)) {
        logger.warn('retrying later', { error: error as Error });
        throw error;
      }
      logger.error('giving up on this event', { error: error as Error });
      return undefined;
    } finally {
      logger.removeKeys(['cluster', 'kind', 'namespace', 'name']);
    }
  };

  return middy(run).use(injectLambdaContext(logger)).use(publishMetrics(metrics));
}
