/**
 * `osls package` (offline) and the CloudFormation template it writes: each function runs
 * under its own role holding only what its code calls, and each EventBridge rule targets
 * the queue (or, for schedules, the function) serverless.yml routes it to, with the
 * pattern the local bus honours. The delivery numbers and alarms: delivery-chain.test.ts.
 *
 * Packaging bundles every function with esbuild, so this suite takes a while (about 45 s
 * on a loaded two-core machine); it runs once for all the checks below.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRONT_DOOR_FUNCTION } from '../../infra/paths';
import { loadServerlessRouting } from '../../local/bus';
import type { ServerlessRouting } from '../../local/bus';
import { WEBHOOK_TIMEOUT_SECONDS } from '../../shared/domain/webhook/webhook-settings';
import { ORIGIN_SECRET_HEADER } from '../../shared/domain/webhook/webhook-token';
import { packageService } from './package-service';
import type { PackagedService } from './package-service';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: { 'ForAllValues:StringLike'?: { 'dynamodb:LeadingKeys'?: string[] } };
}

const SERVICE = 'ome-pinning';
const STAGE = 'dev';

/** What each function's code calls, besides writing its logs. */
interface Needs {
  role: string;
  /** DynamoDB actions on the control-plane table, per item family (partition key prefix): one statement each. */
  dynamodb: Record<string, string[]>;
  /** Publishes hints (events:PutEvents on the bus). */
  publishes?: boolean;
  /** Has a dead-letter queue (asynchronous invocations and rule targets). */
  deadLetterQueue?: string;
  /** Reads the admission webhook's key secret. */
  webhookKey?: boolean;
  /** Reads hints from this SQS queue (its event source polls with the function's role). */
  hintQueue?: string;
  /** Samples canaries from CloudWatch and Amazon Managed Service for Prometheus. */
  readsMetrics?: boolean;
}

/**
 * Derived from the code: leases acquire, renew and release with UpdateItem; idempotency
 * claims with PutItem, reads with GetItem, completes with UpdateItem and abandons with
 * DeleteItem; checkpoints load with GetItem and save with PutItem; the registry is read
 * with GetItem (one cluster) and Query (all clusters), never written by a function. Every
 * function that talks to a cluster gets its client from the registry. test/iam/ judges the
 * same statements case by case, and runs the store calls under each role.
 */
const NEEDS: Record<string, Needs> = {
  // Lists the registry, leases per shard, checkpoints (a shard's loads in BatchGetItem calls, a
  // Query of the partition of a cluster without a checkpoints item, a PutItem), publishes.
  'forward-watch-events': {
    role: 'ForwardWatchEventsRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], 'CHECKPOINT#*': ['BatchGetItem', 'BatchWriteItem', 'PutItem', 'Query'], REGISTRY: ['GetItem', 'Query'] },
    publishes: true,
    deadLetterQueue: 'ForwardWatchEventsDeadLetterQueue',
  },
  // Object lease, sync-token claims, one cluster's record.
  pin: {
    role: 'PinRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], 'IDEMPOTENCY#*': ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], REGISTRY: ['GetItem'] },
    // Notifications of the runs it opens.
    publishes: true,
    deadLetterQueue: 'PinDeadLetterQueue',
    hintQueue: 'PinHintQueue',
  },
  // Hands roll-forwards to the pin use-case, so the same as pin; keeps a long fan-out's
  // continuation and publishes its continuation hint.
  'drift-check': {
    role: 'DriftCheckRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], 'IDEMPOTENCY#*': ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], REGISTRY: ['GetItem'], 'CONTINUATION#*': ['GetItem', 'PutItem', 'DeleteItem'] },
    publishes: true,
    deadLetterQueue: 'DriftCheckDeadLetterQueue',
    hintQueue: 'DriftCheckHintQueue',
  },
  // Object lease, repin-request claims, one cluster's record.
  'repin-apply': {
    role: 'RepinApplyRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], 'IDEMPOTENCY#*': ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], REGISTRY: ['GetItem'] },
    // Notifications of the runs its promotes and repins move.
    publishes: true,
    deadLetterQueue: 'RepinApplyDeadLetterQueue',
    hintQueue: 'RepinApplyHintQueue',
  },
  // Object lease; the scheduled sweep lists the registry.
  'rollout-run': {
    role: 'RolloutRunRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], REGISTRY: ['GetItem', 'Query'] },
    // A sequential group's turn: a relisted hint asks pin to render its workload.
    publishes: true,
    deadLetterQueue: 'RolloutRunDeadLetterQueue',
    hintQueue: 'RolloutRunHintQueue',
    // Analysis from the AWS metric sources a binding may name.
    readsMetrics: true,
  },
  // A sweep lease and continuation per cluster; lists the registry. Only its schedule invokes it.
  'revision-gc': {
    role: 'RevisionGcRole',
    dynamodb: { 'LEASE#*': ['UpdateItem'], REGISTRY: ['GetItem', 'Query'], 'CONTINUATION#*': ['GetItem', 'PutItem', 'DeleteItem'] },
    // Notifications of the revisions its sweeps deleted.
    publishes: true,
    deadLetterQueue: 'RevisionGcDeadLetterQueue',
  },
  // Lists the registry and reads each cluster's record; publishes relisted hints; advances
  // fleet sync waves and stores each cluster's drift report.
  resync: {
    role: 'ResyncRole',
    dynamodb: { REGISTRY: ['GetItem', 'Query'], FLEET: ['GetItem', 'PutItem', 'Query'] },
    publishes: true,
    deadLetterQueue: 'ResyncDeadLetterQueue',
  },
  // Reads the cluster named in its URL to look up a runtime; synchronous, so no queue.
  'admission-webhook': {
    role: 'AdmissionWebhookRole',
    dynamodb: { REGISTRY: ['GetItem'] },
    webhookKey: true,
  },
};

/**
 * Cluster credentials of the kinds the registry stores for AWS (the function's own Secrets
 * Manager secret per cluster under the service's prefix, or an EKS cluster), for every
 * function that reaches a cluster.
 */
const CLUSTER_CREDENTIAL_ACTIONS = ['secretsmanager:GetSecretValue', 'eks:DescribeCluster'];

const sub = (text: string): Json => ({ 'Fn::Sub': text });
const getAtt = (logicalId: string): Json => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** Every resource a role of `functionName` may name: nothing else, and `*` only for an action that takes no resource. */
function allowedResources(functionName: string, needs: Needs): Json[] {
  return [
    sub(`arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${SERVICE}-${STAGE}-${functionName}:*`),
    getAtt('ControlPlaneTable'),
    sub(`arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${SERVICE}/${STAGE}/clusters/*/${functionName}-??????`),
    sub('arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/*'),
    ...(needs.publishes ? [getAtt('OmeEventBus')] : []),
    ...(needs.deadLetterQueue ? [getAtt(needs.deadLetterQueue)] : []),
    ...(needs.webhookKey ? [{ Ref: 'AdmissionWebhookKey' }, { Ref: 'AdmissionOriginSecret' }] : []),
    ...(needs.hintQueue ? [getAtt(needs.hintQueue)] : []),
    ...(needs.readsMetrics ? [sub('arn:${AWS::Partition}:aps:*:${AWS::AccountId}:workspace/*')] : []),
  ];
}

/** Actions that take no resource type (IAM's service reference): their statement's resource can only be `*`. */
const RESOURCELESS_ACTIONS = new Set(['cloudwatch:GetMetricData']);

function expectedActions(needs: Needs): string[] {
  return [
    'logs:CreateLogStream',
    'logs:PutLogEvents',
    ...Object.values(needs.dynamodb).flatMap((actions) => actions.map((action) => `dynamodb:${action}`)),
    ...CLUSTER_CREDENTIAL_ACTIONS,
    ...(needs.publishes ? ['events:PutEvents'] : []),
    ...(needs.deadLetterQueue ? ['sqs:SendMessage'] : []),
    ...(needs.webhookKey ? ['secretsmanager:GetSecretValue'] : []),
    // The event source's receive and delete; the handler's SendMessage that puts back a hint that met a held lease.
    ...(needs.hintQueue ? ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:SendMessage'] : []),
    ...(needs.readsMetrics ? ['cloudwatch:GetMetricData', 'aps:QueryMetrics'] : []),
  ].sort();
}

const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

describe('Packaging: osls package and its CloudFormation template', () => {
  let packaged: PackagedService | undefined;
  let resources: Record<string, Resource>;
  let routing: ServerlessRouting;
  /** Function name → logical id of its AWS::Lambda::Function. */
  const functionIds = new Map<string, string>();

  beforeAll(async () => {
    packaged = await packageService(STAGE);
    const { template } = packaged;
    resources = template.Resources;
    routing = await loadServerlessRouting('serverless.yml', { stage: STAGE });
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      functionIds.set(String(resource.Properties.FunctionName).replace(`${SERVICE}-${STAGE}-`, ''), id);
    }
  }, 300_000);

  afterAll(async () => {
    await packaged?.remove();
  });

  it('packages every function serverless.yml declares, and only those the table above covers', () => {
    // Assess
    expect([...functionIds.keys()].sort()).toEqual(routing.functions.map((fn) => fn.name).sort());
    expect([...functionIds.keys()].sort()).toEqual(Object.keys(NEEDS).sort());
  });

  it('gives each function a role of its own, and creates no other role', () => {
    // Assess
    const roles = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Role').map(([id]) => id);
    expect(roles.sort()).toEqual(Object.values(NEEDS).map((n) => n.role).sort());
    for (const [name, needs] of Object.entries(NEEDS)) {
      const fn = resources[functionIds.get(name) ?? ''];
      expect(fn?.Properties.Role, name).toEqual(getAtt(needs.role));
    }
  });

  it.each(Object.entries(NEEDS))('%s: its role allows exactly what its code calls, on the intended ARNs', (name, needs) => {
    // Prepare
    const role = resources[needs.role];
    const policies = (role?.Properties.Policies ?? []) as Array<{ PolicyDocument: { Statement: Statement[] } }>;
    const statements = policies.flatMap((policy) => policy.PolicyDocument.Statement);
    const allowed = allowedResources(name, needs);

    // Assess: only Allow, the expected actions and nothing more, no wildcard action or resource.
    expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
    expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
    const actions = statements.flatMap((s) => asList(s.Action));
    expect([...actions].sort()).toEqual(expectedActions(needs));
    for (const action of actions) expect(action, `${name}: ${action}`).not.toContain('*');
    for (const statement of statements) {
      // `*` only for an action that takes no resource, alone in its statement.
      if (asList(statement.Action).every((action) => RESOURCELESS_ACTIONS.has(action))) {
        expect(statement.Resource, `${name} ${statement.Sid}`).toBe('*');
        continue;
      }
      for (const resource of asList(statement.Resource)) {
        expect(resource, `${name} ${statement.Sid}`).not.toBe('*');
        expect(allowed, `${name} ${statement.Sid}: ${JSON.stringify(resource)}`).toContainEqual(resource);
      }
    }
    // DynamoDB only on the table, one statement per item family with that family's actions.
    const families: Record<string, string[]> = {};
    for (const statement of statements.filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')))) {
      expect(statement.Resource).toEqual(getAtt('ControlPlaneTable'));
      const keys = statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [];
      expect(keys, `${name} ${statement.Sid}`).toHaveLength(1);
      families[keys[0] ?? ''] = asList(statement.Action).map((a) => a.replace('dynamodb:', '')).sort();
    }
    expect(families).toEqual(Object.fromEntries(Object.entries(needs.dynamodb).map(([family, actions]) => [family, [...actions].sort()])));
  });

  it('tells each hint consumer its own queue\'s URL, on a standard queue (a held-lease hint is put back with a per-message delay)', () => {
    for (const [name, needs] of Object.entries(NEEDS)) {
      const environment = (resources[functionIds.get(name) ?? '']?.Properties.Environment as { Variables: Json }).Variables;
      expect(environment.HINT_QUEUE_URL, name).toEqual(needs.hintQueue ? { Ref: needs.hintQueue } : undefined);
      if (!needs.hintQueue) continue;
      // FIFO queues refuse a per-message DelaySeconds, and their deduplication could drop the copy.
      expect(resources[needs.hintQueue]?.Properties.FifoQueue, name).toBeUndefined();
      expect(resources[needs.hintQueue]?.Properties.ContentBasedDeduplication, name).toBeUndefined();
    }
  });

  it('targets each rule at the queue (or, for a schedule, the function) serverless.yml routes it to, with its pattern, retry policy and dead-letter queue', () => {
    // Prepare
    const rules = Object.values(resources).filter((r) => r.Type === 'AWS::Events::Rule');

    // Assess
    // Every rule is one the local bus routes: to a function, or (the notifications) to a topic.
    expect(rules.map((r) => r.Properties.Name).sort()).toEqual([...routing.rules, ...routing.topicRules].map((r) => r.name).sort());
    for (const expected of routing.topicRules) {
      const rule = rules.find((r) => r.Properties.Name === expected.name);
      expect(rule?.Properties.EventPattern, expected.name).toEqual(expected.pattern);
      expect(rule?.Properties.Targets, expected.name).toEqual([{ Id: expected.topic, Arn: { Ref: expected.topic } }]);
    }
    for (const expected of routing.rules) {
      const rule = rules.find((r) => r.Properties.Name === expected.name);
      const targets = (rule?.Properties.Targets ?? []) as Array<{ Arn: unknown; RetryPolicy?: Json; DeadLetterConfig?: { Arn: unknown } }>;
      expect(targets, expected.name).toHaveLength(1);
      const [target] = targets;
      expect(target?.Arn, expected.name).toEqual(getAtt(expected.queue ?? functionIds.get(expected.functionName) ?? '?'));
      expect(target?.RetryPolicy, expected.name).toEqual({
        MaximumRetryAttempts: expected.retryPolicy.maximumRetryAttempts,
        MaximumEventAgeInSeconds: expected.retryPolicy.maximumEventAgeSeconds,
      });
      expect(target?.DeadLetterConfig?.Arn, expected.name).toEqual(getAtt(NEEDS[expected.functionName]?.deadLetterQueue ?? '?'));
      if (expected.schedule) {
        expect(rule?.Properties.ScheduleExpression, expected.name).toBe(expected.schedule);
      } else {
        // The pattern AWS evaluates is the one the local bus evaluates.
        expect(rule?.Properties.EventPattern, expected.name).toEqual(expected.pattern);
        expect(rule?.Properties.EventBusName, expected.name).toEqual({ 'Fn::GetAtt': ['OmeEventBus', 'Name'] });
      }
    }
  });

  it('runs the admission webhook with reserved concurrency, a timeout equal to the webhook timeoutSeconds, and its own generated key', () => {
    // Prepare
    const id = functionIds.get('admission-webhook') ?? '';
    const fn = resources[id];
    const url = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Url');
    const key = resources.AdmissionWebhookKey;

    // Assess
    expect(fn?.Properties.ReservedConcurrentExecutions).toBe(20);
    expect(fn?.Properties.Timeout).toBe(WEBHOOK_TIMEOUT_SECONDS);
    const environment = (fn?.Properties.Environment as { Variables: Json }).Variables;
    expect(environment).toMatchObject({ ADMISSION_WEBHOOK_KEY_SECRET: { Ref: 'AdmissionWebhookKey' }, ADMISSION_WEBHOOK_KEY_STAGES: 'AWSCURRENT', ADMISSION_FAILURE_POLICY: 'Fail' });
    // NONE: kube-apiserver cannot sign with SigV4; the function checks the path's token first.
    expect(url?.Properties).toMatchObject({ AuthType: 'NONE', TargetFunctionArn: getAtt(id) });
    expect(key?.Type).toBe('AWS::SecretsManager::Secret');
    expect(key?.Properties).toMatchObject({ Name: `${SERVICE}/${STAGE}/admission-webhook-key`, GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true } });
    expect(key?.Properties.SecretString).toBeUndefined();
  });

  it('puts the webhook behind its front door: the CloudFront Function of infra/front-door, its key value store and origin secret', async () => {
    // Prepare
    const distribution = resources.AdmissionFrontDoor?.Properties.DistributionConfig as {
      Origins: Array<{ DomainName: Json; OriginCustomHeaders: Array<{ HeaderName: string; HeaderValue: Json }> }>;
      DefaultCacheBehavior: { ViewerProtocolPolicy: string; FunctionAssociations: Array<{ EventType: string; FunctionARN: Json }> };
    };
    const fn = resources.AdmissionFrontDoorFunction?.Properties as { FunctionCode: string; FunctionConfig: { Runtime: string; KeyValueStoreAssociations: Array<{ KeyValueStoreARN: Json }> } };
    const environment = (resources[functionIds.get('admission-webhook') ?? '']?.Properties.Environment as { Variables: Json }).Variables;

    // Assess: the function's code is the file the local front door runs.
    expect(fn.FunctionCode).toBe(await readFile(FRONT_DOOR_FUNCTION, 'utf8'));
    expect(fn.FunctionConfig).toMatchObject({ Runtime: 'cloudfront-js-2.0', KeyValueStoreAssociations: [{ KeyValueStoreARN: getAtt('AdmissionFrontDoorStore') }] });
    expect(resources.AdmissionFrontDoorStore?.Type).toBe('AWS::CloudFront::KeyValueStore');
    expect(distribution.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': ['AdmissionFrontDoorFunction', 'FunctionMetadata.FunctionARN'] } }],
    });
    // The only origin is the function URL, and each call carries the origin secret the function requires.
    expect(distribution.Origins).toHaveLength(1);
    expect(JSON.stringify(distribution.Origins[0]?.DomainName)).toContain('AdmissionDashwebhookLambdaFunctionUrl');
    expect(distribution.Origins[0]?.OriginCustomHeaders).toEqual([
      { HeaderName: ORIGIN_SECRET_HEADER, HeaderValue: sub('{{resolve:secretsmanager:${AdmissionOriginSecret}:SecretString}}') },
    ]);
    expect(environment).toMatchObject({ ADMISSION_ORIGIN_SECRET: { Ref: 'AdmissionOriginSecret' } });
    expect((packaged?.template as { Outputs?: Record<string, { Value: unknown }> }).Outputs?.AdmissionWebhookUrl?.Value).toEqual(sub('https://${AdmissionFrontDoor.DomainName}'));
  });

  it("denies reading the webhook key to every principal but the webhook's role and the named readers", () => {
    // Prepare
    const policy = resources.AdmissionWebhookKeyPolicy?.Properties as { SecretId: Json; BlockPublicPolicy: boolean; ResourcePolicy: { Statement: Statement[] } };

    // Assess
    expect(policy.SecretId).toEqual({ Ref: 'AdmissionWebhookKey' });
    expect(policy.BlockPublicPolicy).toBe(true);
    expect(policy.ResourcePolicy.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: '*',
        Action: 'secretsmanager:GetSecretValue',
        Condition: { ArnNotLike: { 'aws:PrincipalArn': { 'Fn::Split': [',', { 'Fn::Join': [',', [getAtt('AdmissionWebhookRole'), '']] }] } } },
      }),
    ]);
  });

  it('keeps the table from being deleted and lets it be restored to any second of the last 35 days', () => {
    // Prepare
    const table = resources.ControlPlaneTable as Resource & { DeletionPolicy?: string; UpdateReplacePolicy?: string };

    // Assess
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});
