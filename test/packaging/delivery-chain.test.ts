/**
 * The delivery chain in the packaged CloudFormation template, per consuming function:
 * rule (pattern on the bus) → hint queue → event source mapping with partial batch
 * responses → dead-letter queue after maxReceiveCount receives; with the numbers that make
 * a cluster down for an hour lose no hint, and the alarms that tell an operator something
 * is stuck. The local bus reads the same numbers from serverless.yml (compared here too).
 *
 * Packaging bundles every function with esbuild, so this suite takes a while; it packages
 * once for all the checks below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessRouting } from '../../local/bus';
import type { ServerlessRouting } from '../../local/bus';
import { packageService } from './package-service';
import type { PackagedService } from './package-service';
import { NotificationType } from '../../shared/domain/notification';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
}

const SERVICE = 'ome-pinning';
const STAGE = 'dev';
const HOUR = 3600;
const DAY = 86_400;

/**
 * Each function that reads hints, its chain's logical ids, the rule that feeds it, and the
 * most batches its event source runs at once (serverless.yml gives the reason for each).
 */
const CHAINS = [
  { functionName: 'pin', rule: 'PinHintRule', ruleName: 'pin-isvc', queue: 'PinHintQueue', deadLetterQueue: 'PinDeadLetterQueue', maximumConcurrency: 10 },
  { functionName: 'drift-check', rule: 'DriftCheckHintRule', ruleName: 'drift-check', queue: 'DriftCheckHintQueue', deadLetterQueue: 'DriftCheckDeadLetterQueue', maximumConcurrency: 5 },
  { functionName: 'repin-apply', rule: 'RepinApplyHintRule', ruleName: 'repin-apply', queue: 'RepinApplyHintQueue', deadLetterQueue: 'RepinApplyDeadLetterQueue', maximumConcurrency: 5 },
  { functionName: 'rollout-run', rule: 'RolloutRunHintRule', ruleName: 'rollout-run', queue: 'RolloutRunHintQueue', deadLetterQueue: 'RolloutRunDeadLetterQueue', maximumConcurrency: 5 },
];

const getAtt = (logicalId: string, attribute = 'Arn'): Json => ({ 'Fn::GetAtt': [logicalId, attribute] });
const ALARM_ACTIONS = { 'Fn::If': ['HasAlarmTopic', [{ Ref: 'AlarmTopicArn' }], [{ Ref: 'AlarmTopic' }]] };

describe('Packaging: the hint delivery chain and the alarms', () => {
  let packaged: PackagedService | undefined;
  let template: PackagedService['template'];
  let resources: Record<string, Resource>;
  let routing: ServerlessRouting;
  const functionIds = new Map<string, string>();

  const ofType = (type: string): Array<[string, Resource]> => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const alarmsOn = (metric: string): Resource[] => ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm).filter((alarm) => alarm.Properties.MetricName === metric);

  beforeAll(async () => {
    packaged = await packageService(STAGE);
    template = packaged.template;
    resources = template.Resources;
    routing = await loadServerlessRouting('serverless.yml', { stage: STAGE });
    for (const [id, resource] of ofType('AWS::Lambda::Function')) {
      functionIds.set(String(resource.Properties.FunctionName).replace(`${SERVICE}-${STAGE}-`, ''), id);
    }
  }, 300_000);

  afterAll(async () => {
    await packaged?.remove();
  });

  it('puts a queue between every pattern rule and its function; only schedules invoke functions directly', () => {
    // Assess
    for (const [id, rule] of ofType('AWS::Events::Rule')) {
      const targets = rule.Properties.Targets as Array<{ Arn: { 'Fn::GetAtt'?: [string, string]; Ref?: string } }>;
      const targetId = targets[0]?.Arn['Fn::GetAtt']?.[0] ?? targets[0]?.Arn.Ref ?? '';
      // The notification rule, to a topic, and never for hints: checked on its own below.
      if (resources[targetId]?.Type === 'AWS::SNS::Topic') continue;
      if (rule.Properties.EventPattern) expect(resources[targetId]?.Type, id).toBe('AWS::SQS::Queue');
      else expect(resources[targetId]?.Type, id).toBe('AWS::Lambda::Function');
    }
    expect(CHAINS.map((chain) => chain.functionName).sort()).toEqual(routing.queues.map((queue) => queue.functionName).sort());
  });

  it("sends only the plane's notifications to the notification topic, with Notifications=sns, and only that rule may publish there", () => {
    // Prepare
    const all = resources as Record<string, Resource & { Condition?: string }>;
    const rule = all.NotificationRule;
    const pattern = rule?.Properties.EventPattern as { source: string[]; 'detail-type': string[] };
    const policy = all.NotificationTopicPolicy?.Properties.PolicyDocument as { Statement: Array<{ Principal: Json; Condition: Json; Resource: Json }> };

    // Assess
    for (const id of ['NotificationRule', 'NotificationTopic', 'NotificationTopicPolicy']) expect(all[id]?.Condition, id).toBe('SendNotifications');
    expect(pattern.source).toEqual(['ome.pinning']);
    expect(pattern['detail-type']).not.toContain('Kubernetes Object Changed');
    // Every notification the plane publishes, and nothing else.
    expect([...pattern['detail-type']].sort()).toEqual(Object.values(NotificationType).sort());
    expect(rule?.Properties.Targets).toEqual([{ Id: 'NotificationTopic', Arn: { Ref: 'NotificationTopic' } }]);
    expect(policy.Statement).toEqual([
      expect.objectContaining({ Principal: { Service: 'events.amazonaws.com' }, Resource: { Ref: 'NotificationTopic' }, Condition: { ArnEquals: { 'aws:SourceArn': getAtt('NotificationRule') } } }),
    ]);
    expect(routing.topicRules.map((topicRule) => topicRule.topic)).toEqual(['NotificationTopic']);
  });

  describe.each(CHAINS)('$functionName', (chain) => {
    it('rule → hint queue: the pattern on the bus, EventBridge retrying into the queue for a day, failures parked in the dead-letter queue', () => {
      // Prepare
      const rule = resources[chain.rule];
      const expected = routing.rules.find((candidate) => candidate.queue === chain.queue);
      const targets = rule?.Properties.Targets as Array<{ Arn: unknown; RetryPolicy?: Json; DeadLetterConfig?: { Arn: unknown } }>;

      // Assess
      expect(rule?.Type).toBe('AWS::Events::Rule');
      expect(rule?.Properties.Name).toBe(`${SERVICE}-${STAGE}-${chain.ruleName}`);
      expect(rule?.Properties.EventBusName).toEqual(getAtt('OmeEventBus', 'Name'));
      expect(rule?.Properties.EventPattern).toEqual(expected?.pattern);
      expect(targets).toHaveLength(1);
      expect(targets[0]?.Arn).toEqual(getAtt(chain.queue));
      expect(targets[0]?.RetryPolicy).toEqual({ MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: DAY });
      expect(targets[0]?.DeadLetterConfig?.Arn).toEqual(getAtt(chain.deadLetterQueue));
    });

    it('hint queue → function: an event source mapping with partial batch responses, batches of 10 sent at once', () => {
      // Prepare
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, mapping]) => JSON.stringify(mapping.Properties.EventSourceArn) === JSON.stringify(getAtt(chain.queue)));

      // Assess
      expect(mappings).toHaveLength(1);
      const [, mapping] = mappings[0] as [string, Resource];
      expect(mapping.Properties.FunctionName).toEqual(getAtt(functionIds.get(chain.functionName) ?? '?'));
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      expect(mapping.Properties.BatchSize).toBe(10);
      expect(mapping.Properties.MaximumBatchingWindowInSeconds).toBe(0);
    });

    it('hint queue → function: no more batches at once than its MaximumConcurrency, within what the function may run; the local bus reads the same', () => {
      // Prepare
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, mapping]) => JSON.stringify(mapping.Properties.EventSourceArn) === JSON.stringify(getAtt(chain.queue)));
      const reserved = resources[functionIds.get(chain.functionName) ?? '']?.Properties.ReservedConcurrentExecutions;

      // Assess
      expect(mappings).toHaveLength(1);
      const [, mapping] = mappings[0] as [string, Resource];
      expect(mapping.Properties.ScalingConfig).toEqual({ MaximumConcurrency: chain.maximumConcurrency });
      // 2 is the least Lambda accepts.
      expect(chain.maximumConcurrency).toBeGreaterThanOrEqual(2);
      if (reserved !== undefined) expect(chain.maximumConcurrency).toBeLessThanOrEqual(Number(reserved));
      expect(routing.queues.find((local) => local.name === chain.queue)?.maximumConcurrency).toBe(chain.maximumConcurrency);
    });

    it('hint queue: visibility ≥ 6× the function timeout, redrive after receives spanning 2 hours, 4 days of retention; the local bus reads the same', () => {
      // Prepare
      const queue = resources[chain.queue]?.Properties ?? {};
      const timeout = Number(resources[functionIds.get(chain.functionName) ?? '']?.Properties.Timeout);
      const redrive = queue.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
      const visibility = Number(queue.VisibilityTimeout);

      // Assess
      expect(visibility).toBeGreaterThanOrEqual(6 * timeout);
      expect(redrive.deadLetterTargetArn).toEqual(getAtt(chain.deadLetterQueue));
      expect((redrive.maxReceiveCount - 1) * visibility).toBeGreaterThanOrEqual(2 * HOUR);
      expect(queue.MessageRetentionPeriod).toBe(4 * DAY);
      expect(queue.SqsManagedSseEnabled).toBe(true);
      expect(routing.queues.find((local) => local.name === chain.queue)).toMatchObject({
        functionName: chain.functionName,
        visibilityTimeoutSeconds: visibility,
        maxReceiveCount: redrive.maxReceiveCount,
        deadLetterQueue: chain.deadLetterQueue,
        messageRetentionSeconds: 4 * DAY,
        batchSize: 10,
        maximumBatchingWindowSeconds: 0,
        reportBatchItemFailures: true,
      });
    });

    it('dead-letter queue: 14 days of retention, an alarm on its depth, and one on the age of the oldest hint', () => {
      // Prepare
      const deadLetters = alarmsOn('ApproximateNumberOfMessagesVisible').filter((alarm) => JSON.stringify(alarm.Properties.Dimensions).includes(`"${chain.deadLetterQueue}"`));
      const age = alarmsOn('ApproximateAgeOfOldestMessage').filter((alarm) => JSON.stringify(alarm.Properties.Dimensions).includes(`"${chain.queue}"`));

      // Assess
      expect(resources[chain.deadLetterQueue]?.Properties.MessageRetentionPeriod).toBe(14 * DAY);
      expect(deadLetters).toHaveLength(1);
      expect(deadLetters[0]?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(chain.deadLetterQueue, 'QueueName') }],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: ALARM_ACTIONS,
      });
      expect(age).toHaveLength(1);
      expect(age[0]?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(chain.queue, 'QueueName') }],
        Statistic: 'Maximum',
        Threshold: 1800,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: ALARM_ACTIONS,
      });
    });
  });

  it('lets EventBridge send to the hint queues only from this service’s rules', () => {
    // Prepare
    const policy = resources.HintQueuePolicy?.Properties as { Queues: unknown[]; PolicyDocument: { Statement: Array<Json> } };

    // Assess
    expect(policy.Queues).toEqual(CHAINS.map((chain) => ({ Ref: chain.queue })));
    expect(policy.PolicyDocument.Statement).toEqual([
      expect.objectContaining({ Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage', Condition: { ArnLike: { 'aws:SourceArn': [expect.anything()] } } }),
    ]);
  });

  it('alarms on every dead-letter queue, including the scheduled functions’', () => {
    // Prepare
    const deadLetterQueues = ofType('AWS::SQS::Queue').map(([id]) => id).filter((id) => id.endsWith('DeadLetterQueue'));
    const alarmed = alarmsOn('ApproximateNumberOfMessagesVisible').map((alarm) => (alarm.Properties.Dimensions as Array<{ Value: { 'Fn::GetAtt': [string, string] } }>)[0]?.Value['Fn::GetAtt'][0]);

    // Assess
    expect(deadLetterQueues).toHaveLength(7);
    expect(alarmed.sort()).toEqual(deadLetterQueues.sort());
  });

  it('alarms on forwarder failures: the function erroring, and a cluster it could not watch', () => {
    // Prepare
    const forwarder = resources[functionIds.get('forward-watch-events') ?? '']?.Properties.FunctionName;
    const errors = alarmsOn('Errors').filter((alarm) => JSON.stringify(alarm.Properties.Dimensions).includes(`"${String(forwarder)}"`));
    const clusterFailures = alarmsOn('ForwarderRunsFailed');

    // Assess
    expect(errors).toHaveLength(1);
    expect(errors[0]?.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: resources[functionIds.get('forward-watch-events') ?? '']?.Properties.FunctionName }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: ALARM_ACTIONS,
    });
    expect(clusterFailures).toHaveLength(1);
    expect(clusterFailures[0]?.Properties).toMatchObject({
      Namespace: 'OmePinning',
      Dimensions: [{ Name: 'service', Value: 'forward-watch-events' }],
      AlarmActions: ALARM_ACTIONS,
    });
  });

  it.each([
    ['Errors', 'admission-webhook-errors'],
    ['Throttles', 'admission-webhook-throttles'],
  ])('alarms on the admission webhook’s %s in any 5-minute period: each is a review the API server did not get an answer to', (metric, name) => {
    // Prepare
    const webhook = resources[functionIds.get('admission-webhook') ?? '']?.Properties.FunctionName;
    const alarms = alarmsOn(metric).filter((alarm) => JSON.stringify(alarm.Properties.Dimensions).includes(`"${String(webhook)}"`));

    // Assess
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.Properties).toMatchObject({
      AlarmName: `${SERVICE}-${STAGE}-${name}`,
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: webhook }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: ALARM_ACTIONS,
      OKActions: ALARM_ACTIONS,
    });
  });

  it('notifies the SNS topic parameter, or a topic of its own when the parameter is left empty', () => {
    // Prepare
    const topic = resources.AlarmTopic as Resource & { Condition?: string };
    const outputs = (template as { Outputs?: Record<string, { Value: unknown }> }).Outputs;

    // Assess
    expect(template.Parameters?.AlarmTopicArn).toMatchObject({ Type: 'String', Default: '' });
    expect(template.Conditions?.HasAlarmTopic).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'AlarmTopicArn' }, ''] }] });
    expect(template.Conditions?.CreateAlarmTopic).toEqual({ 'Fn::Equals': [{ Ref: 'AlarmTopicArn' }, ''] });
    expect(topic).toMatchObject({ Type: 'AWS::SNS::Topic', Condition: 'CreateAlarmTopic', Properties: { TopicName: `${SERVICE}-${STAGE}-alarms` } });
    expect(outputs?.AlarmTopicArn?.Value).toEqual({ 'Fn::If': ['HasAlarmTopic', { Ref: 'AlarmTopicArn' }, { Ref: 'AlarmTopic' }] });
    for (const [id, alarm] of ofType('AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions, id).toEqual(ALARM_ACTIONS);
      expect(alarm.Properties.OKActions, id).toEqual(ALARM_ACTIONS);
    }
  });

  it('resyncs every ten minutes through a schedule on the resync function', () => {
    // Prepare
    const schedule = ofType('AWS::Events::Rule').map(([, rule]) => rule).find((rule) => rule.Properties.Name === `${SERVICE}-${STAGE}-resync-schedule`);

    // Assess
    expect(schedule?.Properties.ScheduleExpression).toBe('rate(10 minutes)');
    expect((schedule?.Properties.Targets as Array<{ Arn: unknown }>)[0]?.Arn).toEqual(getAtt(functionIds.get('resync') ?? '?'));
  });
});
