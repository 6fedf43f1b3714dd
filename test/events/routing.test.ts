import { describe, expect, it } from 'vitest';
import { nextFireTime, parseSchedule, parseServerlessRouting } from '../../local/bus/index.js';
import { InvalidInputError } from '../../shared/errors.js';

describe('Function: parseSchedule / nextFireTime', () => {
  const at = Date.UTC(2026, 0, 5, 10, 7, 30); // Monday 2026-01-05 10:07:30Z

  it.each<[string, number]>([
    ['rate(1 minute)', at + 60_000],
    ['rate(5 minutes)', at + 300_000],
    ['rate(2 hours)', at + 7_200_000],
    ['cron(0/15 * * * ? *)', Date.UTC(2026, 0, 5, 10, 15)],
    ['cron(0 12 * * ? *)', Date.UTC(2026, 0, 5, 12, 0)],
    ['cron(30 9 ? * MON-FRI *)', Date.UTC(2026, 0, 6, 9, 30)],
    ['cron(0 0 1 JAN ? 2027)', Date.UTC(2027, 0, 1, 0, 0)],
  ])('%s fires next at the expected time', (expression, expected) => {
    expect(nextFireTime(parseSchedule(expression), at)).toBe(expected);
  });

  it.each(['rate(0 minutes)', 'rate(1 fortnight)', 'cron(0 12 * * *)', 'cron(0 12 L * ? *)', 'every 5 minutes'])('rejects %s', (expression) => {
    expect(() => parseSchedule(expression)).toThrow(InvalidInputError);
  });
});

describe('Function: parseServerlessRouting', () => {
  const yml = `
service: svc
provider:
  name: aws
  stage: \${opt:stage, 'dev'}
  timeout: 12
custom:
  bus: \${self:service}-\${sls:stage}-bus
functions:
  a:
    handler: functions/a/handler.handler
    events:
      - eventBridge:
          eventBus: { 'Fn::GetAtt': [Bus, Name] }
          pattern: { source: [x] }
      - eventBridge:
          name: \${self:service}-tick
          schedule: rate(1 minute)
          retryPolicy: { maximumRetryAttempts: 2, maximumEventAge: 120 }
resources:
  Resources:
    Bus:
      Type: AWS::Events::EventBus
      Properties:
        Name: \${self:custom.bus}
`;

  it('resolves variables, the bus reference and AWS default retry policy', () => {
    const routing = parseServerlessRouting(yml, { stage: 'prod' });
    expect(routing.stage).toBe('prod');
    expect(routing.functions).toEqual([{ name: 'a', handler: 'functions/a/handler.handler', timeoutSeconds: 12 }]);
    expect(routing.rules).toEqual([
      { name: 'a-rule-1', functionName: 'a', eventBusName: 'svc-prod-bus', enabled: true, pattern: { source: ['x'] }, retryPolicy: { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 } },
      { name: 'svc-tick', functionName: 'a', eventBusName: 'default', enabled: true, schedule: 'rate(1 minute)', retryPolicy: { maximumRetryAttempts: 2, maximumEventAgeSeconds: 120 } },
    ]);
    expect(parseServerlessRouting(yml).stage).toBe('dev');
  });

  it('refuses a rule whose pattern EventBridge would reject', () => {
    expect(() => parseServerlessRouting(yml.replace('source: [x]', 'source: x'))).toThrow(/source: must be an array/);
  });
});
