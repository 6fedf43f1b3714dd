/**
 * Reads the routing of serverless.yml so the local bus routes and redelivers exactly what
 * AWS will: the `AWS::Events::Rule` resources that put hints on a function's SQS queue,
 * those queues (visibility timeout, retention, redrive policy to the dead-letter queue)
 * and the functions' `sqs` event sources (batch size, batching window, maximum concurrency,
 * partial batch responses), plus each function's `eventBridge` events (schedules, and any rule that
 * invokes a function directly) with its asynchronous retry settings.
 * Resolves the few Serverless variables the file uses (`${self:…}`, `${sls:stage}`,
 * `${opt:…, 'default'}`, `${param:…, 'default'}`) and an event bus given as
 * `Fn::GetAtt: [Resource, Name]` / `Ref` to a bus declared under `resources`.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { InvalidInputError } from '../../shared/domain/errors.js';
import { validatePattern } from './pattern.js';
import type { EventPattern } from './pattern.js';

/** AWS's defaults when a target has no retry policy. */
export const DEFAULT_RETRY_POLICY = { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 } as const;

/** SQS's and Lambda's defaults for what serverless.yml leaves out. */
export const SQS_DEFAULTS = {
  visibilityTimeoutSeconds: 30,
  messageRetentionSeconds: 345_600,
  batchSize: 10,
  maximumBatchingWindowSeconds: 0,
  /** Without `maximumConcurrency`, Lambda scales a standard queue's event source up to 1,250 batches at once. */
  maximumConcurrency: 1250,
} as const;
/** Lambda retries a failed asynchronous invocation twice unless told otherwise. */
export const DEFAULT_ASYNC_RETRY_ATTEMPTS = 2;

export interface RetryPolicy {
  maximumRetryAttempts: number;
  maximumEventAgeSeconds: number;
}

export interface LocalRule {
  name: string;
  functionName: string;
  /** `default` for schedules and rules without `eventBus`. */
  eventBusName: string;
  pattern?: EventPattern;
  /** `rate(...)` or `cron(...)`. */
  schedule?: string;
  enabled: boolean;
  /** EventBridge's retries of delivering to the target (not of the function's errors). */
  retryPolicy: RetryPolicy;
  /** Logical id of the dead-letter queue in the template, when one is set. */
  deadLetterQueue?: string;
  /** Logical id of the SQS queue the rule targets; absent when it invokes the function itself. */
  queue?: string;
  /** A target's constant input (`input:`): sent instead of the event, as EventBridge does. */
  input?: Record<string, unknown>;
}

/**
 * An `AWS::Events::Rule` whose one target is an SNS topic of the template (the
 * notifications): the local bus keeps what it delivers for tests and `npm start` to read.
 * A rule's `Condition` is not evaluated: locally the rule is always there.
 */
export interface LocalTopicRule {
  name: string;
  eventBusName: string;
  pattern: EventPattern;
  enabled: boolean;
  /** Logical id of the topic. */
  topic: string;
}

/** An SQS queue between rules and a function, with the numbers that govern redelivery. */
export interface LocalQueue {
  /** Logical id in the template. */
  name: string;
  /** The function whose `sqs` event source reads it. */
  functionName: string;
  visibilityTimeoutSeconds: number;
  messageRetentionSeconds: number;
  /** Receives before SQS moves a message to `deadLetterQueue`; absent: kept until retention ends. */
  maxReceiveCount?: number;
  deadLetterQueue?: string;
  batchSize: number;
  maximumBatchingWindowSeconds: number;
  /** `maximumConcurrency`: batches the event source hands the function at once. */
  maximumConcurrency: number;
  /** `functionResponseType: ReportBatchItemFailures`: the function names the messages that failed. */
  reportBatchItemFailures: boolean;
}

export interface LocalFunction {
  name: string;
  handler: string;
  timeoutSeconds: number;
  /** Lambda's retries of a failed asynchronous (e.g. scheduled) invocation. */
  maximumRetryAttempts: number;
  /** Logical id of the `onError` queue for asynchronous invocations, when one is set. */
  onError?: string;
}

export interface ServerlessRouting {
  service: string;
  stage: string;
  functions: LocalFunction[];
  rules: LocalRule[];
  queues: LocalQueue[];
  topicRules: LocalTopicRule[];
  /** Every bus a rule listens on (custom buses and `default`). */
  busNames: string[];
}

export interface LoadRoutingOptions {
  stage?: string;
  region?: string;
  params?: Record<string, string>;
}

type Doc = Record<string, unknown>;

export async function loadServerlessRouting(path: string, options: LoadRoutingOptions = {}): Promise<ServerlessRouting> {
  const text = await readFile(path, 'utf8');
  return parseServerlessRouting(text, options);
}

/** Parses serverless.yml text; throws InvalidInputError for a rule or queue the bus cannot honour. */
export function parseServerlessRouting(text: string, options: LoadRoutingOptions = {}): ServerlessRouting {
  const doc = parse(text) as Doc;
  if (!isRecord(doc)) throw new InvalidInputError('serverless.yml is not a YAML mapping');
  const resolve = createResolver(doc, options);
  const stage = resolve('${sls:stage}') as string;
  const provider = (isRecord(doc.provider) ? doc.provider : {}) as Doc;
  const defaultTimeout = Number(resolve(provider.timeout ?? 6));
  const functionsDoc = (isRecord(doc.functions) ? doc.functions : {}) as Record<string, Doc>;
  const resources = (readPath(doc, 'resources.Resources') ?? {}) as Record<string, Doc>;

  const functions: LocalFunction[] = [];
  const rules: LocalRule[] = [];
  const queues: LocalQueue[] = [];
  const topicRules: LocalTopicRule[] = [];
  for (const [functionName, definition] of Object.entries(functionsDoc)) {
    const fn: LocalFunction = {
      name: functionName,
      handler: String(resolve(definition.handler ?? '')),
      timeoutSeconds: Number(resolve(definition.timeout ?? defaultTimeout)),
      maximumRetryAttempts: numberOr(resolve(definition.maximumRetryAttempts), DEFAULT_ASYNC_RETRY_ATTEMPTS),
    };
    const onError = logicalIdOf(definition.onError);
    if (onError) fn.onError = onError;
    functions.push(fn);
    const events = Array.isArray(definition.events) ? (definition.events as Doc[]) : [];
    events.forEach((event, index) => {
      if (isRecord(event.eventBridge)) rules.push(toRule(functionName, index + 1, resolve(event.eventBridge) as Doc, doc, resolve));
      if (isRecord(event.sqs)) queues.push(toQueue(functionName, resolve(event.sqs) as Doc, resources, resolve));
    });
  }
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (!isRecord(resource) || resource.Type !== 'AWS::Events::Rule') continue;
    const properties = resolve(resource.Properties ?? {}) as Doc;
    const topicRule = toTopicRule(logicalId, properties, resources, doc, resolve);
    if (topicRule) topicRules.push(topicRule);
    else rules.push(toQueueRule(logicalId, properties, queues, doc, resolve));
  }
  const busNames = [...new Set([...rules, ...topicRules].map((rule) => rule.eventBusName))];
  return { service: String(resolve(doc.service)), stage, functions, rules, queues, topicRules, busNames };
}

function toRule(functionName: string, index: number, source: Doc, doc: Doc, resolve: Resolver): LocalRule {
  const name = typeof source.name === 'string' ? source.name : `${functionName}-rule-${index}`;
  if (source.pattern === undefined && source.schedule === undefined) {
    throw new InvalidInputError(`rule ${name} of ${functionName} has neither a pattern nor a schedule`);
  }
  const rule: LocalRule = {
    name,
    functionName,
    eventBusName: resolveBusName(source.eventBus, doc, resolve),
    enabled: source.enabled !== false,
    retryPolicy: {
      maximumRetryAttempts: numberOr(readPath(source, 'retryPolicy.maximumRetryAttempts'), DEFAULT_RETRY_POLICY.maximumRetryAttempts),
      maximumEventAgeSeconds: numberOr(readPath(source, 'retryPolicy.maximumEventAge'), DEFAULT_RETRY_POLICY.maximumEventAgeSeconds),
    },
  };
  if (source.pattern !== undefined) {
    validatePattern(source.pattern);
    rule.pattern = source.pattern;
  }
  if (typeof source.schedule === 'string') rule.schedule = source.schedule;
  if (isRecord(source.input)) rule.input = source.input;
  const dlq = logicalIdOf(source.deadLetterQueueArn);
  if (dlq) rule.deadLetterQueue = dlq;
  return rule;
}

/** A function's `sqs` event: the queue it reads, with that queue's properties from `resources`. */
function toQueue(functionName: string, source: Doc, resources: Record<string, Doc>, resolve: Resolver): LocalQueue {
  const name = logicalIdOf(source.arn);
  const resource = name ? resources[name] : undefined;
  if (!name || !isRecord(resource) || resource.Type !== 'AWS::SQS::Queue') {
    throw new InvalidInputError(`the sqs event of ${functionName} must name a queue under resources as { Fn::GetAtt: [Queue, Arn] }`);
  }
  const properties = (resolve(resource.Properties ?? {}) ?? {}) as Doc;
  const queue: LocalQueue = {
    name,
    functionName,
    visibilityTimeoutSeconds: numberOr(properties.VisibilityTimeout, SQS_DEFAULTS.visibilityTimeoutSeconds),
    messageRetentionSeconds: numberOr(properties.MessageRetentionPeriod, SQS_DEFAULTS.messageRetentionSeconds),
    batchSize: numberOr(source.batchSize, SQS_DEFAULTS.batchSize),
    maximumBatchingWindowSeconds: numberOr(source.maximumBatchingWindow, SQS_DEFAULTS.maximumBatchingWindowSeconds),
    maximumConcurrency: numberOr(source.maximumConcurrency, SQS_DEFAULTS.maximumConcurrency),
    reportBatchItemFailures: source.functionResponseType === 'ReportBatchItemFailures',
  };
  const redrive = isRecord(properties.RedrivePolicy) ? properties.RedrivePolicy : undefined;
  if (redrive) {
    const deadLetterQueue = logicalIdOf(redrive.deadLetterTargetArn);
    const maxReceiveCount = Number(redrive.maxReceiveCount);
    if (!deadLetterQueue || !Number.isInteger(maxReceiveCount) || maxReceiveCount < 1) {
      throw new InvalidInputError(`queue ${name}: RedrivePolicy needs deadLetterTargetArn as { Fn::GetAtt: [Queue, Arn] } and a whole maxReceiveCount of at least 1`);
    }
    queue.deadLetterQueue = deadLetterQueue;
    queue.maxReceiveCount = maxReceiveCount;
  }
  return queue;
}

/** An `AWS::Events::Rule` resource whose one target is an SNS topic of the template; undefined for any other rule. */
function toTopicRule(logicalId: string, properties: Doc, resources: Record<string, Doc>, doc: Doc, resolve: Resolver): LocalTopicRule | undefined {
  const targets = Array.isArray(properties.Targets) ? (properties.Targets as Doc[]) : [];
  const topic = targets.length === 1 ? logicalIdOf(targets[0]?.Arn) : undefined;
  if (!topic || resources[topic]?.Type !== 'AWS::SNS::Topic') return undefined;
  const name = typeof properties.Name === 'string' ? properties.Name : logicalId;
  if (properties.EventPattern === undefined) throw new InvalidInputError(`rule ${name} sends to topic ${topic} but has no EventPattern`);
  validatePattern(properties.EventPattern);
  return {
    name,
    eventBusName: resolveBusName(properties.EventBusName, doc, resolve),
    pattern: properties.EventPattern as EventPattern,
    enabled: properties.State !== 'DISABLED',
    topic,
  };
}

/** An `AWS::Events::Rule` resource whose one target is a queue some function reads. */
function toQueueRule(logicalId: string, properties: Doc, queues: LocalQueue[], doc: Doc, resolve: Resolver): LocalRule {
  const name = typeof properties.Name === 'string' ? properties.Name : logicalId;
  const targets = Array.isArray(properties.Targets) ? (properties.Targets as Doc[]) : [];
  const queueName = targets.length === 1 ? logicalIdOf(targets[0]?.Arn) : undefined;
  const queue = queues.find((candidate) => candidate.name === queueName);
  if (!queue) {
    throw new InvalidInputError(`rule ${name} must have one target, a queue that a function's sqs event reads`);
  }
  if (properties.EventPattern === undefined && properties.ScheduleExpression === undefined) {
    throw new InvalidInputError(`rule ${name} has neither an EventPattern nor a ScheduleExpression`);
  }
  const target = targets[0] as Doc;
  const rule: LocalRule = {
    name,
    functionName: queue.functionName,
    eventBusName: resolveBusName(properties.EventBusName, doc, resolve),
    enabled: properties.State !== 'DISABLED',
    retryPolicy: {
      maximumRetryAttempts: numberOr(readPath(target, 'RetryPolicy.MaximumRetryAttempts'), DEFAULT_RETRY_POLICY.maximumRetryAttempts),
      maximumEventAgeSeconds: numberOr(readPath(target, 'RetryPolicy.MaximumEventAgeInSeconds'), DEFAULT_RETRY_POLICY.maximumEventAgeSeconds),
    },
    queue: queue.name,
  };
  if (properties.EventPattern !== undefined) {
    validatePattern(properties.EventPattern);
    rule.pattern = properties.EventPattern as EventPattern;
  }
  if (typeof properties.ScheduleExpression === 'string') rule.schedule = properties.ScheduleExpression;
  const dlq = logicalIdOf(readPath(target, 'DeadLetterConfig.Arn'));
  if (dlq) rule.deadLetterQueue = dlq;
  return rule;
}

function resolveBusName(eventBus: unknown, doc: Doc, resolve: Resolver): string {
  if (eventBus === undefined || eventBus === null) return 'default';
  if (typeof eventBus === 'string') return eventBus.startsWith('arn:') ? eventBus.slice(eventBus.lastIndexOf('/') + 1) : eventBus;
  const logicalId = logicalIdOf(eventBus);
  const name = logicalId ? readPath(doc, `resources.Resources.${logicalId}.Properties.Name`) : undefined;
  if (typeof name !== 'string') {
    throw new InvalidInputError(`cannot resolve eventBus ${JSON.stringify(eventBus)} to a bus declared under resources`);
  }
  return resolve(name) as string;
}

/** `{Ref: X}` or `{Fn::GetAtt: [X, attr]}` → X. */
function logicalIdOf(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}

type Resolver = (value: unknown) => unknown;

const VARIABLE = /\$\{([^{}]+)\}/g;

/** Resolves Serverless variables in strings (recursively in objects); unknown ones stay as written. */
function createResolver(doc: Doc, options: LoadRoutingOptions): Resolver {
  const lookup = (expression: string): string | undefined => {
    const [primary = '', ...rest] = expression.split(',');
    const fallback = rest.length > 0 ? rest.join(',').trim().replace(/^['"]|['"]$/g, '') : undefined;
    const [sourceName, address = ''] = primary.trim().split(/:(.*)/s, 2) as [string, string?];
    let value: unknown;
    if (sourceName === 'self') value = readPath(doc, address);
    else if (sourceName === 'sls' && address === 'stage') value = options.stage ?? resolveString(`\${self:provider.stage, 'dev'}`);
    else if (sourceName === 'opt' && address === 'stage') value = options.stage;
    else if (sourceName === 'opt' && address === 'region') value = options.region;
    else if (sourceName === 'param') value = options.params?.[address];
    else return undefined;
    const chosen = value ?? fallback;
    return chosen === undefined ? undefined : String(chosen);
  };
  const resolveString = (text: string): string => {
    let current = text;
    for (let round = 0; round < 10; round += 1) {
      const next = current.replace(VARIABLE, (whole, expression: string) => lookup(expression) ?? whole);
      if (next === current) break;
      current = next;
    }
    return current;
  };
  const resolve: Resolver = (value) => {
    if (typeof value === 'string') return resolveString(value);
    if (Array.isArray(value)) return value.map(resolve);
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item)]));
    return value;
  };
  return resolve;
}

function readPath(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const key of path.split('.')) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function numberOr(value: unknown, fallback: number): number {
  const parsed = Number(value);
  return value === undefined || value === null || Number.isNaN(parsed) ? fallback : parsed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
