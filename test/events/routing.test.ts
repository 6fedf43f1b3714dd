import { describe, expect, it } from 'vitest';
import { nextFireTime, parseSchedule, parseServerlessRouting } from '../../local/bus/index.js';
import { InvalidInputError } from '../../shared/domain/errors.js';

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
    maximumRetryAttempts: 1
    onError: { 'Fn::GetAtt': [ADeadLetters, Arn] }
    events:
      - sqs:
          arn: { 'Fn::GetAtt': [AQueue, Arn] }
          batchSize: 5
          maximumBatchingWindow: 2
          functionResponseType: ReportBatchItemFailures
      - eventBridge:
          name: \${self:service}-tick
          schedule: rate(1 minute)
          retryPolicy: { maximumRetryAttempts: 2, maximumEventAge: 120 }
  b:
    handler: functions/b/handler.handler
    events:
      - eventBridge:
          eventBus: { 'Fn::GetAtt': [Bus, Name] }
          pattern: { source: [y] }
resources:
  Resources:
    Bus:
      Type: AWS::Events::EventBus
      Properties:
        Name: \${self:custom.bus}
    ARule:
      Type: AWS::Events::Rule
      Properties:
        Name: \${self:service}-a
        EventBusName: { 'Fn::GetAtt': [Bus, Name] }
        EventPattern: { source: [x] }
        Targets:
          - Id: AQueue
            Arn: { 'Fn::GetAtt': [AQueue, Arn] }
            DeadLetterConfig: { Arn: { 'Fn::GetAtt': [ADeadLetters, Arn] } }
    AQueue:
      Type: AWS::SQS::Queue
      Properties:
        VisibilityTimeout: 72
        RedrivePolicy:
          deadLetterTargetArn: { 'Fn::GetAtt': [ADeadLetters, Arn] }
          maxReceiveCount: 7
    ADeadLetters:
      Type: AWS::SQS::Queue
`;

  it('resolves variables and the bus; reads rule → queue → function chains with their numbers, and SQS and EventBridge defaults', () => {
    const routing = parseServerlessRouting(yml, { stage: 'prod' });
    expect(routing.stage).toBe('prod');
    expect(routing.functions).toEqual([
      { name: 'a', handler: 'functions/a/handler.handler', timeoutSeconds: 12, maximumRetryAttempts: 1, onError: 'ADeadLetters' },
      { name: 'b', handler: 'functions/b/handler.handler', timeoutSeconds: 12, maximumRetryAttempts: 2 },
    ]);
    expect(routing.queues).toEqual([
      {
        name: 'AQueue',
        functionName: 'a',
        visibilityTimeoutSeconds: 72,
        messageRetentionSeconds: 345_600,
        maxReceiveCount: 7,
        deadLetterQueue: 'ADeadLetters',
        batchSize: 5,
        maximumBatchingWindowSeconds: 2,
        // No maximumConcurrency: as many batches at once as Lambda scales to.
        maximumConcurrency: 1250,
        reportBatchItemFailures: true,
      },
    ]);
    expect(routing.rules).toEqual([
      { name: 'svc-tick', functionName: 'a', eventBusName: 'default', enabled: true, schedule: 'rate(1 minute)', retryPolicy: { maximumRetryAttempts: 2, maximumEventAgeSeconds: 120 } },
      { name: 'b-rule-1', functionName: 'b', eventBusName: 'svc-prod-bus', enabled: true, pattern: { source: ['y'] }, retryPolicy: { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 } },
      { name: 'svc-a', functionName: 'a', eventBusName: 'svc-prod-bus', enabled: true, pattern: { source: ['x'] }, queue: 'AQueue', deadLetterQueue: 'ADeadLetters', retryPolicy: { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 } },
    ]);
    expect(parseServerlessRouting(yml).stage).toBe('dev');
  });

  it('refuses a rule whose pattern EventBridge would reject', () => {
    expect(() => parseServerlessRouting(yml.replace('source: [x]', 'source: x'))).toThrow(/source: must be an array/);
  });

  it('refuses a rule whose target is not a queue a function reads, and a redrive policy without a count', () => {
    expect(() => parseServerlessRouting(yml.replace("Arn: { 'Fn::GetAtt': [AQueue, Arn] }", "Arn: { 'Fn::GetAtt': [ADeadLetters, Arn] }"))).toThrow(/rule svc-a must have one target/);
    expect(() => parseServerlessRouting(yml.replace('maxReceiveCount: 7', 'maxReceiveCount: none'))).toThrow(/queue AQueue: RedrivePolicy/);
  });
});
