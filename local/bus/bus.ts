/**
 * A local Amazon EventBridge for `npm start` and tests.
 *
 * It serves PutEvents over HTTP in the AWS JSON 1.1 protocol, so the same
 * `@aws-sdk/client-eventbridge` code the forwarder runs in AWS works here with an
 * `endpoint` override (any credentials). It routes with the rules of serverless.yml,
 * evaluated by our `matchesPattern`, and invokes in-process targets the way EventBridge
 * invokes Lambda: asynchronously, at least once, retried with backoff under the rule's
 * retry policy, then parked in a dead-letter list. Schedules fire their targets.
 *
 * For tests it can misbehave on purpose, deterministically for a given seed: deliver
 * twice, shuffle deliveries within a window, delay them, throttle PutEvents calls or fail
 * single entries — the ways the real service is allowed to behave.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { InvalidInputError } from '../../shared/errors.js';
import type { EventBridgeEnvelope } from '../../shared/events/hint-event.js';
import { matchesPattern } from '../../shared/events/pattern.js';
import { createRandom } from './random.js';
import type { Random } from './random.js';
import { loadServerlessRouting } from './rules.js';
import type { LocalFunction, LocalRule } from './rules.js';
import { nextFireTime, parseSchedule } from './schedule.js';

export type TargetHandler = (event: EventBridgeEnvelope, context: Context) => unknown;

export interface DeliveryFaults {
  /** Probability that a delivery is made twice. */
  duplicate?: number;
  /** Deliveries are held until this many are waiting (or briefly), then released shuffled. */
  reorderWindow?: number;
  /** Each delivery waits a random time in this range first. */
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
  event: EventBridgeEnvelope;
  attempts: number;
  reason: 'RetriesExhausted' | 'MaximumEventAgeExceeded';
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
  /** Backoff between delivery retries: base doubles per attempt up to max, with jitter (defaults 200 ms, 30 s). */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
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
  functions: LocalFunction[];
  /** Routes the rules of `functionName` to `handler`; returns a function that unregisters it. */
  registerTarget(functionName: string, handler: TargetHandler): () => void;
  faults: {
    set(faults: DeliveryFaults): void;
    clear(): void;
    readonly current: Readonly<DeliveryFaults>;
  };
  /** Deliveries given up on, newest last. */
  deadLetters: DeadLetter[];
  /** Fires a schedule rule now, as if its time had come. */
  triggerSchedule(ruleName: string): void;
  /** Resolves once no request, delivery or retry is in flight. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

interface Delivery {
  rule: LocalRule;
  event: EventBridgeEnvelope;
  attempt: number;
  acceptedAt: number;
}

const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;
const REORDER_FLUSH_MS = 20;

export async function startLocalBus(options: LocalBusOptions): Promise<LocalBus> {
  const routing = await loadServerlessRouting(options.serverlessYmlPath, options.stage ? { stage: options.stage } : {});
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const retryBase = options.retryBaseDelayMs ?? 200;
  const retryMax = options.retryMaxDelayMs ?? 30_000;
  const maxDeadLetters = options.maxDeadLetters ?? 1000;
  const logger = options.logger;
  const functionsByName = new Map(routing.functions.map((fn) => [fn.name, fn]));
  const targets = new Map<string, TargetHandler>();
  const deadLetters: DeadLetter[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let faults: DeliveryFaults = {};
  let random: Random = createRandom(1);
  let reorderBuffer: Delivery[] = [];
  let reorderTimer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];
  let stopped = false;

  const later = (ms: number, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
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

  async function invoke(delivery: Delivery): Promise<void> {
    const { rule } = delivery;
    const handler = targets.get(rule.functionName);
    const timeoutMs = (functionsByName.get(rule.functionName)?.timeoutSeconds ?? 6) * 1000;
    try {
      if (!handler) throw new Error(`no target registered for ${rule.functionName}`);
      const context = lambdaContext(rule.functionName, Date.now() + timeoutMs);
      await withTimeout(Promise.resolve().then(() => handler(delivery.event, context)), timeoutMs);
      settle();
    } catch (error) {
      retryOrDeadLetter(delivery, error);
    }
  }

  function retryOrDeadLetter(delivery: Delivery, error: unknown): void {
    const { rule } = delivery;
    const message = error instanceof Error ? error.message : String(error);
    const ageExceeded = Date.now() - delivery.acceptedAt > rule.retryPolicy.maximumEventAgeSeconds * 1000;
    if (stopped) {
      settle();
      return;
    }
    if (delivery.attempt > rule.retryPolicy.maximumRetryAttempts || ageExceeded) {
      deadLetters.push({
        ruleName: rule.name,
        functionName: rule.functionName,
        event: delivery.event,
        attempts: delivery.attempt,
        reason: ageExceeded ? 'MaximumEventAgeExceeded' : 'RetriesExhausted',
        error: message,
      });
      if (deadLetters.length > maxDeadLetters) deadLetters.shift();
      logger?.warn('delivery dead-lettered', { rule: rule.name, eventId: delivery.event.id, attempts: delivery.attempt, error: message });
      settle();
      return;
    }
    const ceiling = Math.min(retryMax, retryBase * 2 ** (delivery.attempt - 1));
    const delay = Math.round(ceiling / 2 + random.next() * (ceiling / 2));
    later(delay, () => void invoke({ ...delivery, attempt: delivery.attempt + 1 }));
  }

  function dispatch(delivery: Delivery): void {
    const [low, high] = faults.delayMs ?? [0, 0];
    const delay = high > low ? low + Math.floor(random.next() * (high - low + 1)) : low;
    later(delay, () => void invoke(delivery));
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
      const delivery: Delivery = { rule, event, attempt: 1, acceptedAt: Date.now() };
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
  }

  function fireSchedule(rule: LocalRule): void {
    if (stopped || !targets.has(rule.functionName)) return;
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
    handleRequest(request, response, putEvents)
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
    functions: routing.functions,
    registerTarget(functionName, handler) {
      if (!functionsByName.has(functionName)) {
        throw new InvalidInputError(`serverless.yml has no function ${functionName} (functions: ${[...functionsByName.keys()].join(', ')})`);
      }
      targets.set(functionName, handler);
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

/** AWS's entry size: 14 bytes for Time plus the UTF-8 bytes of the strings. */
function entrySize(entry: RequestEntry): number {
  const bytes = (value: unknown) => (typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0);
  const resources = Array.isArray(entry.Resources) ? entry.Resources.reduce((sum: number, item) => sum + bytes(item), 0) : 0;
  return (entry.Time === undefined ? 0 : 14) + bytes(entry.Source) + bytes(entry.DetailType) + bytes(entry.Detail) + resources;
}

async function handleRequest(
  request: IncomingMessage,
  response: ServerResponse,
  putEvents: (body: unknown) => PutEventsOutcome,
): Promise<void> {
  const body = await readBody(request);
  const target = request.headers['x-amz-target'];
  if (request.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
    sendError(response, 400, 'UnknownOperationException', `The local bus serves AWSEvents.PutEvents only (got ${String(target)})`);
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
    const outcome = putEvents(parsed);
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
