/**
 * Reads the routing of serverless.yml — each function's `eventBridge` events (pattern
 * rules on a bus, and schedules) — so the local bus routes exactly what AWS will.
 * Resolves the few Serverless variables the file uses (`${self:…}`, `${sls:stage}`,
 * `${opt:…, 'default'}`, `${param:…, 'default'}`) and an event bus given as
 * `Fn::GetAtt: [Resource, Name]` / `Ref` to a bus declared under `resources`.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { InvalidInputError } from '../../shared/errors.js';
import { validatePattern } from '../../shared/events/pattern.js';
import type { EventPattern } from '../../shared/events/pattern.js';

/** AWS's defaults when a target has no retry policy. */
export const DEFAULT_RETRY_POLICY = { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 } as const;

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
  retryPolicy: RetryPolicy;
  /** Logical id of the dead-letter queue in the template, when one is set. */
  deadLetterQueue?: string;
}

export interface LocalFunction {
  name: string;
  handler: string;
  timeoutSeconds: number;
}

export interface ServerlessRouting {
  service: string;
  stage: string;
  functions: LocalFunction[];
  rules: LocalRule[];
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

/** Parses serverless.yml text; throws InvalidInputError for a rule the bus cannot honour. */
export function parseServerlessRouting(text: string, options: LoadRoutingOptions = {}): ServerlessRouting {
  const doc = parse(text) as Doc;
  if (!isRecord(doc)) throw new InvalidInputError('serverless.yml is not a YAML mapping');
  const resolve = createResolver(doc, options);
  const stage = resolve('${sls:stage}') as string;
  const provider = (isRecord(doc.provider) ? doc.provider : {}) as Doc;
  const defaultTimeout = Number(resolve(provider.timeout ?? 6));
  const functionsDoc = (isRecord(doc.functions) ? doc.functions : {}) as Record<string, Doc>;

  const functions: LocalFunction[] = [];
  const rules: LocalRule[] = [];
  for (const [functionName, definition] of Object.entries(functionsDoc)) {
    functions.push({
      name: functionName,
      handler: String(resolve(definition.handler ?? '')),
      timeoutSeconds: Number(resolve(definition.timeout ?? defaultTimeout)),
    });
    const events = Array.isArray(definition.events) ? (definition.events as Doc[]) : [];
    events.forEach((event, index) => {
      if (!isRecord(event.eventBridge)) return;
      rules.push(toRule(functionName, index + 1, resolve(event.eventBridge) as Doc, doc, resolve));
    });
  }
  const busNames = [...new Set(rules.map((rule) => rule.eventBusName))];
  return { service: String(resolve(doc.service)), stage, functions, rules, busNames };
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
  const dlq = logicalIdOf(source.deadLetterQueueArn);
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
