export { startLocalBus } from './bus.js';
export type { DeadLetter, DeliveryFaults, LocalBus, LocalBusLogger, LocalBusOptions, TargetHandler } from './bus.js';
export { loadServerlessRouting, parseServerlessRouting, DEFAULT_RETRY_POLICY } from './rules.js';
export type { LocalFunction, LocalRule, RetryPolicy, ServerlessRouting } from './rules.js';
export { nextFireTime, parseSchedule } from './schedule.js';
export type { Schedule } from './schedule.js';
