/**
 * A local Amazon EventBridge, SQS and Lambda event source for `npm start` and tests.
 *
 * It serves PutEvents over HTTP in the AWS JSON 1.1 protocol, so the same
 * `@aws-sdk/client-eventbridge` code the forwarder runs in AWS works here with an
 * `endpoint` override (any credentials). It routes with the rules of serverless.yml,
 * evaluated by our `matchesPattern`, and delivers the way the template does in AWS:
 *
 * - a rule whose target is a hint queue puts the event on that queue; the function reads
 *   it in batches (`batchSize`, `maximumBatchingWindow`), at most `maximumConcurrency` of
 *   them at once, as an SQS event; a message that
 *   fails (the invocation threw or timed out, or the function named it in
 *   `batchItemFailures`) becomes visible again after the queue's visibility timeout and is
 *   received again, and once it has been received `maxReceiveCount` times it moves to the
 *   dead-letter queue; a message older than the queue's retention is dropped; a function may
 *   put a message on its queue with SQS `SendMessage` (served on the same endpoint, AWS JSON
 *   1.0), with a per-message delay (scaled) and message attributes, as a hint handler puts
 *   back a hint that met a held lease: a new message, with its own receive count;
 * - a schedule (or a rule targeting a function) invokes the function asynchronously; a
 *   failed invocation is retried `maximumRetryAttempts` times (Lambda waits one minute,
 *   then two), then goes to the function's `onError` queue;
 * - a rule whose target is an SNS topic of the template (the notifications) hands each
 *   event it matches to that topic once, where `topicMessages` reads it (and the logger's
 *   `info` hears of it): the delivery faults below are about hints and leave these alone.
 *
 * Every number comes from serverless.yml. `timeScale` shrinks the waits (0.001 turns a
 * 180 s visibility timeout into 180 ms) so tests can live through a simulated hour; counts
 * and order of events do not change with it. One liberty: a message never becomes visible
 * again while its own invocation still runs — in AWS the visibility timeout (6× the
 * function timeout) guarantees that; a scaled one alone would not.
 *
 * For tests it can misbehave on purpose, deterministically for a given seed: deliver
 * twice, shuffle deliveries within a window, delay them, throttle PutEvents calls or fail
 * single entries — the ways the real services are allowed to behave.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, SQSEvent, SQSMessageAttributes } from 'aws-lambda';
import { InvalidInputError } from '../../shared/domain/errors.js';
import type { EventBridgeEnvelope } from '../../shared/domain/hint-event.js';
import { matchesPattern } from './pattern.js';
import { createRandom } from './random.js';
import type { Random } from './random.js';
import { loadServerlessRouting } from './rules.js';
import type { LocalFunction, LocalQueue, LocalRule, LocalTopicRule } from './rules.js';
import { nextFireTime, parseSchedule } from './schedule.js';
import { failedMessageIds, toSqsEvent } from './sqs.js';

/** A function as the bus invokes it: an SQS batch from a hint queue, or an EventBridge event from a schedule. */
export type TargetHandler = (event: SQSEvent | EventBridgeEnvelope, context: Context) => unknown;

export interface DeliveryFaults {
  /** Probability that an event is delivered (put on the queue) twice. */
  duplicate?: number;
  /** Deliveries are held until this many are waiting (or briefly), then released shuffled. */
  reorderWindow?: number;
  /** Each delivery waits a random time in this range first (not scaled). */
  delayMs?: [number, number];
  /** Probability that a PutEvents call is refused with ThrottlingException. */
  throttle?: number;
  /** Probability that a single PutEvents entry fails with InternalFailure. */
  failEntries?: number;
  /** Seeds the random choices above; the same seed makes the same choices. */
  seed?: number;
}

export interface DeadLetter {
  ruleName: string;
  functionName: string;
  /** Logical id of the dead-letter queue it went to; absent when none is configured (then it is gone). */
  deadLetterQueue?: string;
  event: EventBridgeEnvelope;
  /** Receives from the hint queue, or invocations of the function. */
  attempts: number;
  /**
   * `MaxReceiveCountExceeded`: SQS redrive; `RetriesExhausted`: Lambda's asynchronous
   * retries; `RetentionPeriodExceeded`: dropped by its queue (in `expired`, not dead-lettered).
   */
  reason: 'MaxReceiveCountExceeded' | 'RetriesExhausted' | 'RetentionPeriodExceeded';
  /** What the last attempt failed with. */
  error: string;
}

export interface LocalBusLogger {
  info?(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
}

export interface LocalBusOptions {
  serverlessYmlPath: string;
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  stage?: string;
  region?: string;
  accountId?: string;
  /** Fire `rate`/`cron` schedules on their timers (default true; tests usually turn them off and use `triggerSchedule`). */
  schedules?: boolean;
  /**
   * Multiplies every delivery wait taken from serverless.yml (visibility timeouts, batching
   * windows, Lambda's retry delays, retention); default 1. Schedules and function timeouts
   * are not scaled.
   */
  timeScale?: number;
  /** Dead letters kept (oldest dropped first); default 1000. */
  maxDeadLetters?: number;
  logger?: LocalBusLogger;
}

export interface LocalBus {
  /** `http://127.0.0.1:<port>`: the EventBridgeClient `endpoint`. */
  endpoint: string;
  region: string;
  busNames: string[];
  rules: LocalRule[];
  queues: LocalQueue[];
  functions: LocalFunction[];
  topicRules: LocalTopicRule[];
  timeScale: number;
  /** What the topic (its logical id, e.g. NotificationTopic) received from its rules, oldest first. */
  topicMessages(topic: string): EventBridgeEnvelope[];
  /** Routes the rules of `functionName` to `handler`; returns a function that unregisters it. */
  registerTarget(functionName: string, handler: TargetHandler): () => void;
  faults: {
    set(faults: DeliveryFaults): void;
    clear(): void;
    readonly current: Readonly<DeliveryFaults>;
  };
  /** Events moved to a dead-letter queue (or given up on), newest last. */
  deadLetters: DeadLetter[];
  /** Messages dropped because they outlived their queue's retention, newest last. */
  expired: DeadLetter[];
  /** Fires a schedule rule now, as if its time had come. */
  triggerSchedule(ruleName: string): void;
  /** Resolves once no request, queued message, delivery or retry is left. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

interface Delivery {
  rule: LocalRule;
  event: EventBridgeEnvelope;
}

interface QueuedMessage {
  messageId: string;
  ruleName: string;
  event: EventBridgeEnvelope;
  sentAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  visibleAt: number;
  /** Received and not yet answered. */
  inFlight: boolean;
  /** Message attributes of a message a function sent (SendMessage). */
  attributes?: SQSMessageAttributes;
  lastError?: string;
}

interface QueueState {
  queue: LocalQueue;
  messages: QueuedMessage[];
  /** Batches handed to the function and not yet answered (at most `maximumConcurrency`). */
  batchesInFlight: number;
  timer?: NodeJS.Timeout;
  timerAt?: number;
}

const MAX_ENTRIES = 10;
/** SQS's largest per-message delay, 15 minutes. */
const MAX_DELAY_SECONDS = 900;
const MAX_REQUEST_BYTES = 256 * 1024;
const REORDER_FLUSH_MS = 20;
/** Messages each topic keeps for `topicMessages`. */
const MAX_TOPIC_MESSAGES = 1000;
/** Lambda waits one minute before the second attempt of an asynchronous invocation, two before the third. */
const ASYNC_RETRY_FIRST_DELAY_MS = 60_000;

export async function startLocalBus(options: LocalBusOptions): Promise<LocalBus> {
  const routing = await loadServerlessRouting(options.serverlessYmlPath, options.stage ? { stage: options.stage } : {});
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const timeScale = options.timeScale ?? 1;
  if (!(timeScale > 0)) throw new InvalidInputError(`timeScale must be above 0 (got ${timeScale})`);
  const maxDeadLetters = options.maxDeadLetters ?? 1000;
  const logger = options.logger;
  const functionsByName = new Map(routing.functions.map((fn) => [fn.name, fn]));
  const queues = new Map<string, QueueState>(routing.queues.map((queue) => [queue.name, { queue, messages: [], batchesInFlight: 0 }]));
  const targets = new Map<string, TargetHandler>();
  const topics = new Map<string, EventBridgeEnvelope[]>(routing.topicRules.map((rule) => [rule.topic, []]));
  const deadLetters: DeadLetter[] = [];
  const expired: DeadLetter[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let faults: DeliveryFaults = {};
  let random: Random = createRandom(1);
  let reorderBuffer: Delivery[] = [];
  let reorderTimer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];
  let stopped = false;

  const scaled = (seconds: number): number => seconds * 1000 * timeScale;
  const later = (ms: number, run: () => void): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const begin = (): void => {
    inFlight += 1;
  };
  const settle = (): void => {
    inFlight -= 1;
    if (inFlight === 0 && reorderBuffer.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  };
  const keep = (list: DeadLetter[], entry: DeadLetter): void => {
    list.push(entry);
    if (list.length > maxDeadLetters) list.shift();
  };

  const ruleArn = (rule: LocalRule): string =>
    rule.eventBusName === 'default'
      ? `arn:aws:events:${region}:${accountId}:rule/${rule.name}`
      : `arn:aws:events:${region}:${accountId}:rule/${rule.eventBusName}/${rule.name}`;

  function lambdaContext(functionName: string, deadline: number): Context {
    const fn = `local-${functionName}`;
    return {
      callbackWaitsForEmptyEventLoop: false,
      functionName: fn,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${fn}`,
      memoryLimitInMB: '1024',
      awsRequestId: randomUUID(),
      logGroupName: `/aws/lambda/${fn}`,
      logStreamName: 'local',
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    };
  }

  /** Runs one invocation under the function's timeout; says whether it threw, and what. */
  async function invokeFunction(functionName: string, event: SQSEvent | EventBridgeEnvelope): Promise<{ threw: true; error: string } | { threw: false; result: unknown }> {
    const handler = targets.get(functionName);
    const timeoutMs = (functionsByName.get(functionName)?.timeoutSeconds ?? 6) * 1000;
    try {
      if (!handler) throw new Error(`no target registered for ${functionName}`);
      const context = lambdaContext(functionName, Date.now() + timeoutMs);
      const result = await withTimeout(Promise.resolve().then(() => handler(event, context)), timeoutMs);
      return { threw: false, result };
    } catch (error) {
      return { threw: true, error: error instanceof Error ? error.message : String(error) };
    }
  }

  // -- Hint queues ------------------------------------------------------------------------

  function sendToQueue(state: QueueState, delivery: Delivery): void {
    const now = Date.now();
    state.messages.push({ messageId: randomUUID(), ruleName: delivery.rule.name, event: delivery.event, sentAt: now, receiveCount: 0, visibleAt: now, inFlight: false });
    // The event source waits up to the batching window for a batch to fill.
    schedulePoll(state, now + scaled(state.queue.maximumBatchingWindowSeconds));
  }

  function schedulePoll(state: QueueState, at: number): void {
    if (stopped) return;
    if (state.timer && state.timerAt !== undefined && state.timerAt <= at) return;
    if (state.timer) {
      clearTimeout(state.timer);
      timers.delete(state.timer);
    }
    state.timerAt = at;
    state.timer = later(Math.max(0, at - Date.now()), () => {
      state.timer = undefined;
      state.timerAt = undefined;
      poll(state);
    });
  }

  /** Removes a message for good: deleted after success, redriven, or expired. */
  function remove(state: QueueState, message: QueuedMessage): void {
    const index = state.messages.indexOf(message);
    if (index >= 0) {
      state.messages.splice(index, 1);
      settle();
    }
  }

  /**
   * Receives what is visible, in batches, as the Lambda event source does: no more than
   * `maximumConcurrency` batches in flight; the rest waits until one is answered.
   */
  function poll(state: QueueState): void {
    if (stopped) return;
    const { queue } = state;
    const now = Date.now();
    if (!targets.has(queue.functionName)) return;
    const capacity = Math.max(0, queue.maximumConcurrency - state.batchesInFlight) * queue.batchSize;
    const received: QueuedMessage[] = [];
    for (const message of [...state.messages]) {
      if (received.length >= capacity) break;
      if (message.inFlight || message.visibleAt > now) continue;
      if (now - message.sentAt > scaled(queue.messageRetentionSeconds)) {
        keep(expired, deadLetterOf(queue, message, 'RetentionPeriodExceeded'));
        logger?.warn('message outlived the queue retention and was dropped', { queue: queue.name, eventId: message.event.id });
        remove(state, message);
        continue;
      }
      // SQS moves a message to the dead-letter queue when a receive would exceed maxReceiveCount.
      if (queue.maxReceiveCount !== undefined && message.receiveCount >= queue.maxReceiveCount) {
        const letter = deadLetterOf(queue, message, 'MaxReceiveCountExceeded');
        keep(deadLetters, letter);
        logger?.warn('message moved to the dead-letter queue', { queue: queue.name, eventId: message.event.id, receives: message.receiveCount, error: letter.error });
        remove(state, message);
        continue;
      }
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.inFlight = true;
      received.push(message);
    }
    for (let start = 0; start < received.length; start += queue.batchSize) {
      void deliverBatch(state, received.slice(start, start + queue.batchSize), now);
    }
    // At the limit, the next answered batch polls again (deliverBatch).
    if (state.batchesInFlight >= queue.maximumConcurrency) return;
    const next = state.messages.filter((message) => !message.inFlight).reduce((soonest, message) => Math.min(soonest, message.visibleAt), Infinity);
    if (next !== Infinity) schedulePoll(state, next);
  }

  async function deliverBatch(state: QueueState, batch: QueuedMessage[], receivedAt: number): Promise<void> {
    const { queue } = state;
    const event = toSqsEvent(
      batch.map((message) => ({
        messageId: message.messageId,
        event: message.event,
        receiveCount: message.receiveCount,
        sentAt: message.sentAt,
        firstReceivedAt: message.firstReceivedAt ?? receivedAt,
        ...(message.attributes ? { attributes: message.attributes } : {}),
      })),
      { region, accountId, queueName: queue.name },
    );
    state.batchesInFlight += 1;
    const outcome = await invokeFunction(queue.functionName, event);
    state.batchesInFlight -= 1;
    const failed = failedMessageIds(batch, outcome, queue.reportBatchItemFailures);
    const visibleAt = receivedAt + scaled(queue.visibilityTimeoutSeconds);
    let soonest = Infinity;
    for (const message of batch) {
      message.inFlight = false;
      if (!failed.has(message.messageId)) {
        remove(state, message);
        continue;
      }
      message.lastError = outcome.threw ? outcome.error : 'reported in batchItemFailures';
      message.visibleAt = visibleAt;
      soonest = Math.min(soonest, message.visibleAt);
    }
    if (soonest !== Infinity) schedulePoll(state, Math.max(Date.now(), soonest));
    // A slot is free again: receive what waited for it.
    if (state.messages.some((message) => !message.inFlight)) schedulePoll(state, Date.now());
  }

  /**
   * SQS SendMessage to a hint queue, as a hint handler puts back a hint that met a held
   * lease: a new message (its own id, receive count and retention), invisible for
   * `DelaySeconds` (0 to 900, scaled like the queue's waits), carrying its String and Number
   * message attributes to the function's records. Its body must be an EventBridge event, as
   * every message on these queues is.
   */
  function sendMessage(body: unknown): { status: 200; body: unknown } {
    const { QueueUrl, MessageBody, DelaySeconds = 0, MessageAttributes = {} } = (body ?? {}) as { QueueUrl?: unknown; MessageBody?: unknown; DelaySeconds?: unknown; MessageAttributes?: unknown };
    if (typeof QueueUrl !== 'string' || typeof MessageBody !== 'string') throw new RequestError(400, 'MissingParameter', 'QueueUrl and MessageBody are required');
    if (typeof DelaySeconds !== 'number' || !Number.isInteger(DelaySeconds) || DelaySeconds < 0 || DelaySeconds > MAX_DELAY_SECONDS) {
      throw new RequestError(400, 'InvalidParameterValue', `DelaySeconds must be a whole number of seconds from 0 to ${MAX_DELAY_SECONDS}`);
    }
    const name = QueueUrl.slice(QueueUrl.lastIndexOf('/') + 1);
    const state = queues.get(name);
    if (!state || !QueueUrl.endsWith(`/${accountId}/${name}`)) throw new RequestError(400, 'QueueDoesNotExist', `The specified queue does not exist: ${QueueUrl}`);
    let event: EventBridgeEnvelope;
    try {
      event = JSON.parse(MessageBody) as EventBridgeEnvelope;
    } catch {
      throw new RequestError(400, 'InvalidMessageContents', 'The local bus carries EventBridge events only: MessageBody is not JSON');
    }
    const attributes = readMessageAttributes(MessageAttributes);
    const now = Date.now();
    const rule = routing.rules.find((candidate) => candidate.queue === state.queue.name);
    const message: QueuedMessage = { messageId: randomUUID(), ruleName: rule?.name ?? 'SendMessage', event, sentAt: now, receiveCount: 0, visibleAt: now + scaled(DelaySeconds), inFlight: false };
    if (Object.keys(attributes).length > 0) message.attributes = attributes;
    begin();
    state.messages.push(message);
    schedulePoll(state, message.visibleAt + scaled(state.queue.maximumBatchingWindowSeconds));
    return { status: 200, body: { MessageId: message.messageId, MD5OfMessageBody: createHash('md5').update(MessageBody).digest('hex') } };
  }

  function deadLetterOf(queue: LocalQueue, message: QueuedMessage, reason: DeadLetter['reason']): DeadLetter {
    return {
      ruleName: message.ruleName,
      functionName: queue.functionName,
      ...(queue.deadLetterQueue ? { deadLetterQueue: queue.deadLetterQueue } : {}),
      event: message.event,
      attempts: message.receiveCount,
      reason,
      error: message.lastError ?? '',
    };
  }

  // -- Direct (asynchronous) invocations ----------------------------------------------------

  async function invokeAsync(delivery: Delivery, attempt: number): Promise<void> {
    const fn = functionsByName.get(delivery.rule.functionName);
    const outcome = await invokeFunction(delivery.rule.functionName, delivery.event);
    if (!outcome.threw || stopped) {
      settle();
      return;
    }
    const retries = fn?.maximumRetryAttempts ?? 0;
    if (attempt > retries) {
      keep(deadLetters, {
        ruleName: delivery.rule.name,
        functionName: delivery.rule.functionName,
        ...(fn?.onError ? { deadLetterQueue: fn.onError } : {}),
        event: delivery.event,
        attempts: attempt,
        reason: 'RetriesExhausted',
        error: outcome.error,
      });
      logger?.warn('invocation failed after its retries', { rule: delivery.rule.name, eventId: delivery.event.id, attempts: attempt, error: outcome.error });
      settle();
      return;
    }
    later(ASYNC_RETRY_FIRST_DELAY_MS * timeScale * 2 ** (attempt - 1), () => void invokeAsync(delivery, attempt + 1));
  }

  // -- Routing and faults -------------------------------------------------------------------

  function dispatch(delivery: Delivery): void {
    const [low, high] = faults.delayMs ?? [0, 0];
    const delay = high > low ? low + Math.floor(random.next() * (high - low + 1)) : low;
    later(delay, () => {
      const state = delivery.rule.queue ? queues.get(delivery.rule.queue) : undefined;
      if (state && !stopped) sendToQueue(state, delivery);
      else if (!stopped) void invokeAsync(delivery, 1);
      else settle();
    });
  }

  function flushReorderBuffer(): void {
    if (reorderTimer) {
      clearTimeout(reorderTimer);
      timers.delete(reorderTimer);
      reorderTimer = undefined;
    }
    const batch = random.shuffle(reorderBuffer);
    reorderBuffer = [];
    for (const delivery of batch) dispatch(delivery);
  }

  /** Hands one matched event to one rule's target, through the configured faults. */
  function enqueue(rule: LocalRule, event: EventBridgeEnvelope): void {
    const copies = random.next() < (faults.duplicate ?? 0) ? 2 : 1;
    for (let copy = 0; copy < copies; copy += 1) {
      begin();
      const delivery: Delivery = { rule, event };
      if ((faults.reorderWindow ?? 0) > 1) {
        reorderBuffer.push(delivery);
        if (reorderBuffer.length >= (faults.reorderWindow ?? 0)) flushReorderBuffer();
        else if (!reorderTimer) {
          reorderTimer = setTimeout(flushReorderBuffer, REORDER_FLUSH_MS);
          timers.add(reorderTimer);
        }
      } else {
        dispatch(delivery);
      }
    }
  }

  function route(busName: string, event: EventBridgeEnvelope): void {
    for (const rule of routing.rules) {
      if (!rule.enabled || !rule.pattern || rule.eventBusName !== busName) continue;
      if (!targets.has(rule.functionName)) continue;
      if (matchesPattern(rule.pattern, event)) enqueue(rule, event);
    }
    for (const rule of routing.topicRules) {
      if (!rule.enabled || rule.eventBusName !== busName || !matchesPattern(rule.pattern, event)) continue;
      const received = topics.get(rule.topic);
      received?.push(event);
      // Kept for reading, not for ever: a long `npm start` keeps the latest.
      if (received && received.length > MAX_TOPIC_MESSAGES) received.shift();
      logger?.info?.('notification', { topic: rule.topic, detailType: event['detail-type'], detail: event.detail });
    }
  }

  function fireSchedule(rule: LocalRule): void {
    if (stopped || !targets.has(rule.functionName)) return;
    // A constant input replaces the scheduled event (the forwarder's rules pass their shard).
    if (rule.input) return enqueue(rule, rule.input as unknown as EventBridgeEnvelope);
    enqueue(rule, {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: accountId,
      time: isoSeconds(new Date()),
      region,
      resources: [ruleArn(rule)],
      detail: {},
    });
  }

  function armSchedule(rule: LocalRule): void {
    const schedule = parseSchedule(rule.schedule as string);
    const next = nextFireTime(schedule, Date.now());
    if (next === undefined || stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      fireSchedule(rule);
      armSchedule(rule);
    }, next - Date.now());
    timer.unref();
    timers.add(timer);
  }

  const knownBuses = new Set(routing.busNames.concat('default'));
  const putEvents = createPutEventsHandler({
    knownBuses,
    region,
    accountId,
    faults: () => faults,
    random: () => random,
    route,
  });

  const server: Server = createServer((request, response) => {
    begin();
    handleRequest(request, response, { 'AWSEvents.PutEvents': putEvents, 'AmazonSQS.SendMessage': sendMessage })
      .catch((error: unknown) => sendError(response, 500, 'InternalException', error instanceof Error ? error.message : String(error)))
      .finally(settle);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;

  for (const rule of routing.rules) {
    if (rule.schedule) parseSchedule(rule.schedule);
    if (rule.schedule && rule.enabled && options.schedules !== false) armSchedule(rule);
  }

  return {
    endpoint: `http://${address.address}:${address.port}`,
    region,
    busNames: [...knownBuses],
    rules: routing.rules,
    queues: routing.queues,
    functions: routing.functions,
    topicRules: routing.topicRules,
    timeScale,
    topicMessages: (topic) => [...(topics.get(topic) ?? [])],
    registerTarget(functionName, handler) {
      if (!functionsByName.has(functionName)) {
        throw new InvalidInputError(`serverless.yml has no function ${functionName} (functions: ${[...functionsByName.keys()].join(', ')})`);
      }
      targets.set(functionName, handler);
      // Messages may have waited for a reader: the event source starts polling now.
      for (const state of queues.values()) if (state.queue.functionName === functionName && state.messages.length > 0) schedulePoll(state, Date.now());
      return () => {
        if (targets.get(functionName) === handler) targets.delete(functionName);
      };
    },
    faults: {
      set(next) {
        faults = { ...next };
        random = createRandom(next.seed ?? 1);
      },
      clear() {
        faults = {};
      },
      get current() {
        return faults;
      },
    },
    deadLetters,
    expired,
    triggerSchedule(ruleName) {
      const rule = routing.rules.find((candidate) => candidate.name === ruleName && candidate.schedule);
      if (!rule) throw new InvalidInputError(`no schedule rule named ${ruleName}`);
      fireSchedule(rule);
    },
    async drain() {
      if (reorderBuffer.length > 0) flushReorderBuffer();
      if (inFlight === 0) return;
      await new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    },
  };
}

// ---------------------------------------------------------------------------------------
// PutEvents over AWS JSON 1.1
// ---------------------------------------------------------------------------------------

interface PutEventsDeps {
  knownBuses: Set<string>;
  region: string;
  accountId: string;
  faults: () => DeliveryFaults;
  random: () => Random;
  route: (busName: string, event: EventBridgeEnvelope) => void;
}

type PutEventsOutcome = { status: 200; body: unknown };

interface RequestEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Resources?: unknown;
  Time?: unknown;
}

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

function createPutEventsHandler(deps: PutEventsDeps): (body: unknown) => PutEventsOutcome {
  return (body) => {
    const entries = (body as { Entries?: unknown })?.Entries;
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new RequestError(400, 'ValidationException', 'Entries must be a list of 1 to 10 entries');
    }
    if (entries.length > MAX_ENTRIES) {
      throw new RequestError(400, 'ValidationException', `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ENTRIES}`);
    }
    const total = (entries as RequestEntry[]).reduce((sum, entry) => sum + entrySize(entry), 0);
    if (total > MAX_REQUEST_BYTES) {
      throw new RequestError(400, 'ValidationException', 'Total size of the entries in the request is over the limit.');
    }
    const faults = deps.faults();
    if (deps.random().next() < (faults.throttle ?? 0)) throw new RequestError(400, 'ThrottlingException', 'Rate exceeded');

    const results = (entries as RequestEntry[]).map((entry) => {
      const problem = checkEntry(entry, deps.knownBuses);
      if (problem) return problem;
      if (deps.random().next() < (faults.failEntries ?? 0)) return { ErrorCode: 'InternalFailure', ErrorMessage: 'Injected failure' };
      const busName = busNameOf(entry.EventBusName);
      const event: EventBridgeEnvelope = {
        version: '0',
        id: randomUUID(),
        'detail-type': entry.DetailType as string,
        source: entry.Source as string,
        account: deps.accountId,
        time: isoSeconds(typeof entry.Time === 'number' ? new Date(entry.Time * 1000) : new Date()),
        region: deps.region,
        resources: Array.isArray(entry.Resources) ? (entry.Resources as string[]) : [],
        detail: JSON.parse(entry.Detail as string) as unknown,
      };
      deps.route(busName, event);
      return { EventId: event.id };
    });
    const failed = results.filter((result) => 'ErrorCode' in result).length;
    return { status: 200, body: { FailedEntryCount: failed, Entries: results } };
  };
}

function checkEntry(entry: RequestEntry, knownBuses: Set<string>): { ErrorCode: string; ErrorMessage: string } | undefined {
  for (const field of ['Source', 'DetailType', 'Detail'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '') {
      return { ErrorCode: 'InvalidArgument', ErrorMessage: `Parameter ${field} is not valid.` };
    }
  }
  try {
    const detail: unknown = JSON.parse(entry.Detail as string);
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) throw new Error('not an object');
  } catch {
    return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  }
  const busName = busNameOf(entry.EventBusName);
  if (!knownBuses.has(busName)) {
    return { ErrorCode: 'InvalidArgument', ErrorMessage: `Event bus ${busName} does not exist.` };
  }
  return undefined;
}

function busNameOf(value: unknown): string {
  if (typeof value !== 'string' || value === '') return 'default';
  return value.startsWith('arn:') ? value.slice(value.lastIndexOf('/') + 1) : value;
}

/** SendMessage's `MessageAttributes` as a Lambda record carries them; String and Number values only (the bus has no use for Binary). */
function readMessageAttributes(value: unknown): SQSMessageAttributes {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RequestError(400, 'InvalidParameterValue', 'MessageAttributes must be a map');
  const attributes: SQSMessageAttributes = {};
  for (const [name, attribute] of Object.entries(value as Record<string, { DataType?: unknown; StringValue?: unknown }>)) {
    const { DataType, StringValue } = attribute ?? {};
    if ((DataType !== 'String' && DataType !== 'Number') || typeof StringValue !== 'string') {
      throw new RequestError(400, 'InvalidParameterValue', `Message attribute ${name} must be a String or Number with a StringValue`);
    }
    attributes[name] = { dataType: DataType, stringValue: StringValue, stringListValues: [], binaryListValues: [] };
  }
  return attributes;
}

/** AWS's entry size: 14 bytes for Time plus the UTF-8 bytes of the strings. */
function entrySize(entry: RequestEntry): number {
  const bytes = (value: unknown) => (typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0);
  const resources = Array.isArray(entry.Resources) ? entry.Resources.reduce((sum: number, item) => sum + bytes(item), 0) : 0;
  return (entry.Time === undefined ? 0 : 14) + bytes(entry.Source) + bytes(entry.DetailType) + bytes(entry.Detail) + resources;
}

async function handleRequest(
  request: IncomingMessage,
  response: ServerResponse,
  operations: Record<string, (body: unknown) => PutEventsOutcome>,
): Promise<void> {
  const body = await readBody(request);
  const target = request.headers['x-amz-target'];
  const operation = typeof target === 'string' && Object.hasOwn(operations, target) ? operations[target] : undefined;
  if (request.method !== 'POST' || !operation) {
    sendError(response, 400, 'UnknownOperationException', `The local bus serves ${Object.keys(operations).join(' and ')} only (got ${String(target)})`);
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.length === 0 ? '{}' : body);
  } catch {
    sendError(response, 400, 'SerializationException', 'Request body is not valid JSON');
    return;
  }
  try {
    const outcome = operation(parsed);
    sendJson(response, outcome.status, outcome.body);
  } catch (error) {
    if (error instanceof RequestError) sendError(response, error.status, error.errorType, error.message);
    else throw error;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, errorType: string, message: string): void {
  if (response.headersSent) return;
  sendJson(response, status, { __type: errorType, message }, errorType);
}

function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Rejects like Lambda's timeout when the handler runs past the function's timeout (the handler itself keeps running). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${ms / 1000} seconds`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
