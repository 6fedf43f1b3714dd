/**
 * The roles in serverless.yml, read straight from the file (no packaging) and judged with the
 * local IAM evaluator: per function, exactly the DynamoDB actions its code performs on each
 * item family and nothing else, no function writing the registry, each function reading
 * only its own cluster secrets, and the admission webhook reading only; each hint consumer
 * receiving from and sending to its own hint queue only, and told that queue's URL.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { evaluatePolicy } from '../../local/iam/policy';
import type { PolicyStatement } from '../../local/iam/policy';
import { loadTemplateRoles } from '../../local/iam/template-roles';
import type { TemplateRoles } from '../../local/iam/template-roles';
import { REPOSITORY_ROOT } from '../../scripts/build';
import { HintDetailType } from '../../shared/domain/hint-event';
import { NotificationType } from '../../shared/domain/notification';

/** Item families by a representative partition key (see shared/adapters/dynamodb/table.ts). */
const FAMILIES = {
  'LEASE#*': 'LEASE#object#c1#InferenceService#ns#isvc',
  'IDEMPOTENCY#*': 'IDEMPOTENCY#sync#c1#uid#token',
  'CHECKPOINT#*': 'CHECKPOINT#c1',
  REGISTRY: 'REGISTRY',
  FLEET: 'FLEET',
  'CONTINUATION#*': 'CONTINUATION#c1',
} as const;
type Family = keyof typeof FAMILIES;

/**
 * From the code: leases acquire, renew and release with UpdateItem; idempotency claims with
 * PutItem, reads with GetItem, completes with UpdateItem and abandons with DeleteItem;
 * checkpoints load with BatchGetItem (Query for a cluster without an item), save with
 * BatchWriteItem and keep the forwarder's error with PutItem; the registry is read with GetItem
 * (every function that reaches a cluster) and listed with Query (the schedules); the fleet
 * family (sync waves, drift reports) is resync's alone; continuations are loaded with
 * GetItem, saved with conditional PutItem and dropped with conditional DeleteItem by the
 * two pieces of long work, the drift fan-out and the GC sweep.
 */
const LEASES = ['UpdateItem'];
const IDEMPOTENCY = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];
const CONTINUATIONS = ['GetItem', 'PutItem', 'DeleteItem'];
const NEEDS: Record<string, Partial<Record<Family, string[]>>> = {
  'forward-watch-events': { 'LEASE#*': LEASES, 'CHECKPOINT#*': ['BatchGetItem', 'BatchWriteItem', 'PutItem', 'Query'], REGISTRY: ['GetItem', 'Query'] },
  pin: { 'LEASE#*': LEASES, 'IDEMPOTENCY#*': IDEMPOTENCY, REGISTRY: ['GetItem'] },
  // Hands roll-forwards to the pin use-case.
  'drift-check': { 'LEASE#*': LEASES, 'IDEMPOTENCY#*': IDEMPOTENCY, REGISTRY: ['GetItem'], 'CONTINUATION#*': CONTINUATIONS },
  'repin-apply': { 'LEASE#*': LEASES, 'IDEMPOTENCY#*': IDEMPOTENCY, REGISTRY: ['GetItem'] },
  'rollout-run': { 'LEASE#*': LEASES, REGISTRY: ['GetItem', 'Query'] },
  'revision-gc': { 'LEASE#*': LEASES, REGISTRY: ['GetItem', 'Query'], 'CONTINUATION#*': CONTINUATIONS },
  // Lists the registry and relists every cluster as hints; holds no lease. Advances sync
  // waves: lists them, reads one, writes each step and each cluster's drift report.
  resync: { REGISTRY: ['GetItem', 'Query'], FLEET: ['GetItem', 'PutItem', 'Query'] },
  'admission-webhook': { REGISTRY: ['GetItem'] },
};

const DYNAMODB_ACTIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'ConditionCheckItem',
  'DescribeTable',
  'UpdateTable',
  'DeleteTable',
];

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const dynamoStatements = (statements: PolicyStatement[]) => statements.filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));

let roles: TemplateRoles;
let functions: Record<string, { environment?: Record<string, unknown> }>;

beforeAll(async () => {
  roles = await loadTemplateRoles(join(REPOSITORY_ROOT, 'serverless.yml'));
  functions = (parse(await readFile(join(REPOSITORY_ROOT, 'serverless.yml'), 'utf8')) as { functions: typeof functions }).functions;
});

/** A function's own environment variables in serverless.yml (the provider's shared ones aside). */
const environmentOf = (name: string): Record<string, unknown> => functions[name]?.environment ?? {};

const statementsOf = (name: string): PolicyStatement[] => {
  const role = roles.functions.get(name);
  if (role === undefined) throw new Error(`serverless.yml declares no function ${name}`);
  return role.statements;
};

describe('serverless.yml roles: DynamoDB', () => {
  it('covers every function serverless.yml declares', () => {
    expect([...roles.functions.keys()].sort()).toEqual(Object.keys(NEEDS).sort());
  });

  it.each(Object.entries(NEEDS))('%s: one statement per item family, naming exactly the actions used on it', (name, needs) => {
    // Prepare
    const statements = dynamoStatements(statementsOf(name));

    // Assess: on the table only, one family each, only ForAllValues:StringLike on LeadingKeys.
    const granted: Record<string, string[]> = {};
    for (const statement of statements) {
      expect(statement.Effect).toBe('Allow');
      expect(statement.Resource, statement.Sid).toBe(roles.tableArn);
      expect(Object.keys(statement.Condition ?? {}), statement.Sid).toEqual(['ForAllValues:StringLike']);
      const keys = asList(statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']);
      expect(keys, `${name} ${statement.Sid}`).toHaveLength(1);
      const family = keys[0] as string;
      expect(granted[family], `${name}: two statements for ${family}`).toBeUndefined();
      granted[family] = asList(statement.Action).map((action) => action.replace('dynamodb:', '')).sort();
    }
    expect(granted).toEqual(Object.fromEntries(Object.entries(needs).map(([family, actions]) => [family, [...actions].sort()])));
  });

  const matrix = Object.keys(NEEDS).flatMap((name) =>
    (Object.keys(FAMILIES) as Family[]).flatMap((family) => DYNAMODB_ACTIONS.map((action) => [name, action, family] as const)),
  );
  it.each(matrix)('%s: dynamodb:%s on %s is allowed only if its code does it', (name, action, family) => {
    // Act
    const decision = evaluatePolicy(statementsOf(name), {
      action: `dynamodb:${action}`,
      resource: roles.tableArn,
      context: { 'dynamodb:LeadingKeys': [FAMILIES[family]] },
    });

    // Assess
    expect(decision.decision).toBe(NEEDS[name]?.[family]?.includes(action) ? 'allow' : 'implicit-deny');
  });

  it.each(Object.keys(NEEDS))('%s: no write into the registry, and no call spanning two families', (name) => {
    for (const action of ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']) {
      expect(evaluatePolicy(statementsOf(name), { action: `dynamodb:${action}`, resource: roles.tableArn, context: { 'dynamodb:LeadingKeys': ['REGISTRY'] } }).decision).toBe('implicit-deny');
    }
    for (const action of ['GetItem', 'UpdateItem']) {
      const decision = evaluatePolicy(statementsOf(name), { action: `dynamodb:${action}`, resource: roles.tableArn, context: { 'dynamodb:LeadingKeys': [FAMILIES['LEASE#*'], FAMILIES.REGISTRY] } });
      expect(decision.decision).toBe('implicit-deny');
    }
  });

  it.each(Object.keys(NEEDS))('%s: nothing on another table or an index', (name) => {
    for (const resource of [roles.tableArn.replace(roles.tableName, 'other-table'), `${roles.tableArn}/index/any`]) {
      const decision = evaluatePolicy(statementsOf(name), { action: 'dynamodb:GetItem', resource, context: { 'dynamodb:LeadingKeys': ['REGISTRY'] } });
      expect(decision.decision, resource).toBe('implicit-deny');
    }
  });
});

describe('serverless.yml roles: cluster secrets', () => {
  const names = Object.keys(NEEDS);
  const secretArn = (secretName: string) => `arn:aws:secretsmanager:${roles.region}:${roles.accountId}:secret:${secretName}-AbC123`;

  it.each(names)('%s: one statement, GetSecretValue only, on its own secrets under the prefix', (name) => {
    // Prepare: the cluster-credential statements (the webhook also reads its own key, below)
    const statements = statementsOf(name).filter((s) => asList(s.Action).some((a) => a.startsWith('secretsmanager:')) && s.Sid !== 'WebhookKey');

    // Assess
    expect(statements).toHaveLength(1);
    expect(statements[0]?.Action).toBe('secretsmanager:GetSecretValue');
    expect(statements[0]?.Condition).toBeUndefined();
    expect(statements[0]?.Resource).toBe(`arn:aws:secretsmanager:${roles.region}:${roles.accountId}:secret:${roles.clusterSecretPrefix}*/${name}-??????`);
  });

  const pairs = names.flatMap((reader) => names.map((owner) => [reader, owner] as const));
  it.each(pairs)('%s may read the secret of %s only if they are the same function', (reader, owner) => {
    const decision = evaluatePolicy(statementsOf(reader), { action: 'secretsmanager:GetSecretValue', resource: secretArn(`${roles.clusterSecretPrefix}prod-eu-1/${owner}`) });
    expect(decision.decision).toBe(reader === owner ? 'allow' : 'implicit-deny');
  });

  it.each(names)('%s: no shared cluster secret, none outside the prefix, no other action', (name) => {
    const denied = [
      // One secret per cluster for every function: the convention before per-function secrets.
      { action: 'secretsmanager:GetSecretValue', resource: secretArn(`${roles.clusterSecretPrefix}prod-eu-1`) },
      { action: 'secretsmanager:GetSecretValue', resource: secretArn(`other/prefix/prod-eu-1/${name}`) },
      { action: 'secretsmanager:GetSecretValue', resource: secretArn(`${roles.clusterSecretPrefix}prod-eu-1/${name}-backup`) },
      { action: 'secretsmanager:PutSecretValue', resource: secretArn(`${roles.clusterSecretPrefix}prod-eu-1/${name}`) },
      { action: 'secretsmanager:DescribeSecret', resource: secretArn(`${roles.clusterSecretPrefix}prod-eu-1/${name}`) },
    ];
    for (const request of denied) expect(evaluatePolicy(statementsOf(name), request).decision, JSON.stringify(request)).toBe('implicit-deny');
  });
  it.each(names)("%s may read the admission webhook's key only if it is the webhook", (name) => {
    const key = secretArn(`${roles.service}/${roles.stage}/admission-webhook-key`);
    const decision = evaluatePolicy(statementsOf(name), { action: 'secretsmanager:GetSecretValue', resource: key });
    expect(decision.decision).toBe(name === 'admission-webhook' ? 'allow' : 'implicit-deny');
  });
});

describe('serverless.yml roles: the admission webhook reads only', () => {
  it('has no action but reads, besides writing its own logs', () => {
    const actions = statementsOf('admission-webhook').flatMap((s) => asList(s.Action));
    const READS = new Set(['dynamodb:GetItem', 'secretsmanager:GetSecretValue', 'eks:DescribeCluster']);
    const LOGS = new Set(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(actions.filter((action) => !READS.has(action) && !LOGS.has(action))).toEqual([]);
    for (const statement of statementsOf('admission-webhook').filter((s) => asList(s.Action).some((a) => LOGS.has(a)))) {
      expect(statement.Resource).toBe(`arn:aws:logs:${roles.region}:${roles.accountId}:log-group:/aws/lambda/${roles.service}-${roles.stage}-admission-webhook:*`);
    }
  });
});

describe('serverless.yml roles: hint queues', () => {
  /** Each hint consumer's own queue (the Lambda SQS event source's); the others have none. */
  const HINT_QUEUES: Record<string, string> = {
    pin: 'PinHintQueue',
    'drift-check': 'DriftCheckHintQueue',
    'repin-apply': 'RepinApplyHintQueue',
    'rollout-run': 'RolloutRunHintQueue',
  };
  const queueArn = (logicalId: string) => `arn:aws:sqs:${roles.region}:${roles.accountId}:${roles.service}-${roles.stage}-${logicalId}`;
  const names = Object.keys(NEEDS);

  it.each(names)('%s may send messages to its own hint queue only, besides its dead-letter queue (a held-lease hint is put back)', (name) => {
    // Prepare: every queue the template declares, hint and dead-letter.
    const everyQueue = [...Object.values(HINT_QUEUES), ...Object.values(HINT_QUEUES).map((queue) => queue.replace('HintQueue', 'DeadLetterQueue')), 'ForwardWatchEventsDeadLetterQueue', 'ResyncDeadLetterQueue'];
    // Act
    const sendsTo = Object.values(HINT_QUEUES).filter((queue) => evaluatePolicy(statementsOf(name), { action: 'sqs:SendMessage', resource: queueArn(queue) }).decision === 'allow');
    const changesVisibilityOn = everyQueue.filter((queue) => evaluatePolicy(statementsOf(name), { action: 'sqs:ChangeMessageVisibility', resource: queueArn(queue) }).decision === 'allow');
    // Assess
    expect(sendsTo).toEqual(HINT_QUEUES[name] ? [HINT_QUEUES[name]] : []);
    expect(changesVisibilityOn).toEqual([]);
  });

  it.each(Object.keys(HINT_QUEUES))('%s has on its hint queue exactly what the event source and the handler use', (name) => {
    const actions = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ChangeMessageVisibility', 'sqs:SendMessage', 'sqs:SendMessageBatch', 'sqs:PurgeQueue', 'sqs:SetQueueAttributes', 'sqs:DeleteQueue'];
    const allowed = actions.filter((action) => evaluatePolicy(statementsOf(name), { action, resource: queueArn(HINT_QUEUES[name] ?? '') }).decision === 'allow');
    expect(allowed).toEqual(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:SendMessage']);
  });

  it.each(Object.keys(HINT_QUEUES))('%s is told its own hint queue\'s URL (HINT_QUEUE_URL)', (name) => {
    expect(environmentOf(name).HINT_QUEUE_URL).toEqual({ Ref: HINT_QUEUES[name] });
  });

  it.each(names.filter((name) => !HINT_QUEUES[name]))('%s, with no hint queue, is told none', (name) => {
    expect(environmentOf(name).HINT_QUEUE_URL).toBeUndefined();
  });
});

describe('serverless.yml roles: metric sources', () => {
  const allowed = (name: string, action: string, resource: string) => evaluatePolicy(statementsOf(name), { action, resource }).decision === 'allow';
  const workspace = (account: string, region = 'us-east-2') => `arn:aws:aps:${region}:${account}:workspace/ws-1234`;
  const names = Object.keys(NEEDS);

  it.each(names)('%s reads metrics only if it samples canaries (rollout-run), and only from its own account', (name) => {
    const samples = name === 'rollout-run';
    expect(allowed(name, 'cloudwatch:GetMetricData', '*')).toBe(samples);
    expect(allowed(name, 'aps:QueryMetrics', workspace(roles.accountId))).toBe(samples);
    expect(allowed(name, 'aps:QueryMetrics', workspace(roles.accountId, 'ap-south-1'))).toBe(samples);
    expect(allowed(name, 'aps:QueryMetrics', workspace('999999999999'))).toBe(false);
    // Reading, never writing: no metric data put, no workspace changed.
    expect(allowed(name, 'cloudwatch:PutMetricData', '*')).toBe(false);
    expect(allowed(name, 'aps:RemoteWrite', workspace(roles.accountId))).toBe(false);
  });
});

describe('serverless.yml roles: the bus', () => {
  const busArn = () => `arn:aws:events:${roles.region}:${roles.accountId}:event-bus/${roles.service}-${roles.stage}-bus`;
  /** What `name` may put on the bus, entry by entry (EventBridge authorises each entry with its detail-type). */
  const mayPut = (name: string, detailType: string) =>
    evaluatePolicy(statementsOf(name), { action: 'events:PutEvents', resource: busArn(), context: { 'events:detail-type': [detailType] } }).decision === 'allow';
  const NOTIFICATIONS: string[] = Object.values(NotificationType);
  /** What InferenceService status writes announce; the wave notifications are resync's, the collected revisions revision-gc's. */
  const OF_STATUS_WRITES = NOTIFICATIONS.filter((type) => !type.startsWith('Wave') && type !== NotificationType.revisionCollected);

  it.each([
    // Notifications of their status writes only: neither may forge a hint, nor a wave's.
    ['pin', false, OF_STATUS_WRITES],
    ['repin-apply', false, OF_STATUS_WRITES],
    // Hints (continuations, render requests, relists) and any notification.
    ['drift-check', true, NOTIFICATIONS],
    ['rollout-run', true, NOTIFICATIONS],
    ['resync', true, NOTIFICATIONS],
    ['forward-watch-events', true, NOTIFICATIONS],
    // The revisions its sweeps deleted, and nothing else.
    ['revision-gc', false, [NotificationType.revisionCollected]],
    ['admission-webhook', false, []],
  ] as const)('%s: hints %s, notifications %j', (name, hints, notifications) => {
    expect(mayPut(name, HintDetailType.objectChanged)).toBe(hints);
    expect(NOTIFICATIONS.filter((type) => mayPut(name, type))).toEqual(notifications);
  });
});
