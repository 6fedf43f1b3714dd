export { startLocalBus } from './bus.js';
export type { DeadLetter, DeliveryFaults, LocalBus, LocalBusLogger, LocalBusOptions, TargetHandler } from './bus.js';
export { loadServerlessRouting, parseServerlessRouting, DEFAULT_ASYNC_RETRY_ATTEMPTS, DEFAULT_RETRY_POLICY, SQS_DEFAULTS } from './rules.js';
export type { LocalFunction, LocalQueue, LocalRule, RetryPolicy, ServerlessRouting } from './rules.js';
export { nextFireTime, parseSchedule } from './schedule.js';
export type { Schedule } from './schedule.js';
export { eventsOfInvocation, failedMessageIds, isSqsEvent, toSqsEvent } from './sqs.js';
export type { SqsEventOptions, SqsMessageView } from './sqs.js';
