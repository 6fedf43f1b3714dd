/**
 * The functions' log lines (shared/app/logger.ts), as written to stdout and stderr: the shape
 * the compact Powertools format gave them, the levels and the environment variables that set
 * them, errors, and the attributes that are left out.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger, injectLambdaContext, type Logger } from '../../shared/app/logger';

const CONTEXT = {
  functionName: 'ome-pinning-dev-pin',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:ome-pinning-dev-pin',
  memoryLimitInMB: '256',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const VARIABLES = ['POWERTOOLS_LOG_LEVEL', 'LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL', 'AWS_LAMBDA_INITIALIZATION_TYPE', '_X_AMZN_TRACE_ID', 'POWERTOOLS_DEV', 'POWERTOOLS_LOGGER_LOG_EVENT', 'POWERTOOLS_LOGGER_SAMPLE_RATE', 'TZ'];
let saved: Record<string, string | undefined> = {};
let written: Array<{ stream: 'stdout' | 'stderr'; line: Record<string, unknown> }> = [];

beforeEach(() => {
  saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) delete process.env[name];
  written = [];
  const keep = (stream: 'stdout' | 'stderr') => (chunk: string | Uint8Array): boolean => {
    for (const line of String(chunk).split('\n').filter((text) => text !== '')) written.push({ stream, line: JSON.parse(line) as Record<string, unknown> });
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(keep('stdout'));
  vi.spyOn(process.stderr, 'write').mockImplementation(keep('stderr'));
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-05T06:00:00.000Z'));
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const lines = (): Array<Record<string, unknown>> => written.map((entry) => entry.line);

/** Runs `body` as one invocation of a handler whose middleware is `injectLambdaContext(logger)`. */
async function invoke(logger: Logger, body: () => void, context: Context = CONTEXT): Promise<void> {
  await middy(async () => body()).use(injectLambdaContext(logger))({}, context);
}

describe('Function: createLogger', () => {
  it('keeps what finds the invocation and what the line says, not what the log group already names', async () => {
    const logger = createLogger('pin');
    await invoke(logger, () => logger.createChild({ persistentKeys: { cluster: 'prod-eu-1' } }).info('InferenceService reconciled', { result: { outcome: 'pinned' } }));
    expect(lines()).toEqual([
      {
        level: 'INFO',
        message: 'InferenceService reconciled',
        timestamp: '2026-12-05T06:00:00.000Z',
        service: 'pin',
        function_request_id: CONTEXT.awsRequestId,
        cluster: 'prod-eu-1',
        result: { outcome: 'pinned' },
      },
    ]);
    expect(Object.keys(lines()[0] ?? {})).toEqual(['level', 'message', 'timestamp', 'service', 'function_request_id', 'cluster', 'result']);
    expect(JSON.stringify(lines())).not.toMatch(/arn:aws|function_name|memory/);
  });

  it('marks the cold start, on the first invocation only, and carries the X-Ray trace when there is one', async () => {
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    const logger = createLogger('pin');
    await invoke(logger, () => logger.createChild({ persistentKeys: { cluster: 'c' } }).info('first'));
    await invoke(logger, () => logger.createChild({ persistentKeys: { cluster: 'c' } }).info('second'));
    expect(lines()).toMatchObject([
      { message: 'first', cold_start: true, xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793' },
      { message: 'second', xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793' },
    ]);
    expect(lines()[1]).not.toHaveProperty('cold_start');
  });

  it('writes a line outside an invocation (the local forwarder) without request fields', () => {
    createLogger('forward-watch-events').info('forwarder started');
    expect(Object.keys(lines()[0] ?? {})).toEqual(['level', 'message', 'timestamp', 'service']);
  });

  it('writes WARN and above to stderr, the rest to stdout', () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'TRACE';
    const logger = createLogger('pin');
    logger.trace('t');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    logger.critical('c');
    expect(written.map(({ stream, line }) => `${String(line.level)}:${stream}`)).toEqual(['TRACE:stdout', 'DEBUG:stdout', 'INFO:stdout', 'WARN:stderr', 'ERROR:stderr', 'CRITICAL:stderr']);
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['INFO by default', {}, ['INFO', 'WARN', 'ERROR']],
    ['POWERTOOLS_LOG_LEVEL', { POWERTOOLS_LOG_LEVEL: 'DEBUG' }, ['DEBUG', 'INFO', 'WARN', 'ERROR']],
    ['LOG_LEVEL', { LOG_LEVEL: 'WARN' }, ['WARN', 'ERROR']],
    ['POWERTOOLS_LOG_LEVEL before LOG_LEVEL', { POWERTOOLS_LOG_LEVEL: 'ERROR', LOG_LEVEL: 'DEBUG' }, ['ERROR']],
    ['a level not spelled as Powertools spells it: INFO', { POWERTOOLS_LOG_LEVEL: 'debug' }, ['INFO', 'WARN', 'ERROR']],
    ["Lambda's advanced logging controls before anything else", { AWS_LAMBDA_LOG_LEVEL: 'ERROR', POWERTOOLS_LOG_LEVEL: 'DEBUG' }, ['ERROR']],
    ['SILENT', { POWERTOOLS_LOG_LEVEL: 'SILENT' }, []],
  ])('logs at %s', (_name, variables, levels) => {
    Object.assign(process.env, variables);
    const logger = createLogger('pin');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(lines().map((line) => line.level)).toEqual(levels);
  });

  it('lets a test set the level, but not over Lambda\'s advanced logging controls', () => {
    createLogger('test', { logLevel: 'SILENT' }).error('e');
    process.env.AWS_LAMBDA_LOG_LEVEL = 'WARN';
    createLogger('test', { logLevel: 'SILENT' }).error('e');
    expect(lines().map((line) => line.level)).toEqual(['ERROR']);
  });

  it('writes an error with its name, location, message, stack, cause and fields, wherever it sits in the line', () => {
    const error = Object.assign(new Error('gone', { cause: new Error('404') }), { retryable: false });
    const logger = createLogger('pin');
    logger.warn('giving up on this event', { error });
    logger.error('failed', error);
    logger.info('nested', { outcome: { error } });
    const [first, second, third] = lines();
    expect(first?.error).toEqual({
      name: 'Error',
      // The first frame that names its file in parentheses, as Powertools reads it.
      location: expect.stringMatching(/:\d+$/) as string,
      message: 'gone',
      stack: error.stack,
      cause: { name: 'Error', location: expect.any(String) as string, message: '404', stack: (error.cause as Error).stack },
      retryable: false,
    });
    expect(second?.error).toEqual(first?.error);
    expect((third?.outcome as Record<string, unknown>).error).toEqual(first?.error);
  });

  it('leaves out empty attributes, a value inside itself and the names of its own fields, and writes bigints as text', () => {
    const circular: Record<string, unknown> = { id: 1 };
    circular.self = circular;
    const logger = createLogger('pin');
    logger.createChild({ persistentKeys: { cluster: 'c', namespace: undefined } }).info('line', { empty: '', none: null, kept: 0, count: 10n, circular, message: 'x', nested: { none: null, gone: undefined } }, 'text');
    expect(lines()).toEqual([
      { level: 'WARN', message: 'The key "message" is a reserved key and will be dropped.', timestamp: '2026-12-05T06:00:00.000Z', service: 'pin', cluster: 'c' },
      { level: 'INFO', message: 'line', timestamp: '2026-12-05T06:00:00.000Z', service: 'pin', cluster: 'c', kept: 0, count: '10', circular: { id: 1 }, nested: { none: null }, extra: 'text' },
    ]);
  });

  it('indents lines with POWERTOOLS_DEV', () => {
    process.env.POWERTOOLS_DEV = 'true';
    const logger = createLogger('pin');
    const raw: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => raw.push(String(chunk)) > 0);
    logger.info('pretty');
    expect(raw[0]).toBe(`${JSON.stringify({ level: 'INFO', message: 'pretty', timestamp: '2026-12-05T06:00:00.000Z', service: 'pin' }, null, 4)}\n`);
  });

  it('logs the event with POWERTOOLS_LOGGER_LOG_EVENT', async () => {
    process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
    const logger = createLogger('pin');
    await middy(async () => undefined).use(injectLambdaContext(logger))({ detail: { clusterId: 'c' } }, CONTEXT);
    expect(lines()).toMatchObject([{ level: 'INFO', message: 'Lambda invocation event', event: { detail: { clusterId: 'c' } } }]);
  });

  it('logs a sampled invocation at DEBUG with POWERTOOLS_LOGGER_SAMPLE_RATE', async () => {
    process.env.POWERTOOLS_LOGGER_SAMPLE_RATE = '1';
    const logger = createLogger('pin');
    await invoke(logger, () => logger.debug('detail'));
    expect(lines().map((line) => line.message)).toEqual(['Setting log level to DEBUG due to sampling rate', 'detail']);
  });
});
