/**
 * The DynamoDB adapter against a mocked client: the exact requests it sends and how each
 * service failure becomes a typed error.
 */
import 'aws-sdk-client-mock-vitest/extend';
import { ConditionalCheckFailedException, InternalServerError, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConflictError,
  ControlPlaneError,
  IdempotencyPayloadMismatchError,
  InvalidInputError,
  LeaseLostError,
  ThrottledError,
  UnavailableError,
} from '../../shared/domain/errors';
import {
  DynamoCheckpointStore,
  DynamoIdempotencyStore,
  DynamoLeaseStore,
  createDynamoClient,
  mapDynamoError,
} from '../../shared/adapters/dynamodb';
import { FakeClock } from './fake-clock';

const documentClient = createDynamoClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });
const ddbMock = mockClient(DynamoDBDocumentClient);
const NOW = 1_700_000_000_000;

function serviceError(name: string, fault: 'client' | 'server', status: number): Error {
  return Object.assign(new Error(`${name} happened`), { name, $fault: fault, $metadata: { httpStatusCode: status } });
}

function conditionFailed(item?: Record<string, unknown>): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(item === undefined ? {} : { Item: item as never }),
  });
}

beforeEach(() => {
  ddbMock.reset();
});

afterEach(() => {
  ddbMock.reset();
});

describe('Method: acquire', () => {
  it('takes the lease with one conditional update that adds to the fencing token', async () => {
    // Prepare
    // The item before the update: released (no holder) at token 6, so ADD made it 7.
    ddbMock.on(UpdateCommand).resolves({ Attributes: { fencingToken: 6, leaseExpiry: 0 } });
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW), { tableName: 't' });

    // Act
    const lease = await store.acquire('forwarder/east', 'pod-1', 5_000);

    // Assess
    expect(lease).toEqual({ key: 'forwarder/east', holder: 'pod-1', fencingToken: 7, expiresAt: NOW + 5_000 });
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(ddbMock).toReceiveCommandWith(UpdateCommand, {
      TableName: 't',
      Key: { pk: 'LEASE#forwarder/east', sk: 'LEASE' },
      UpdateExpression: 'SET holder = :holder, leaseExpiry = :expiry ADD fencingToken :one',
      ConditionExpression: 'attribute_not_exists(holder) OR leaseExpiry < :now OR holder = :holder',
      ExpressionAttributeValues: { ':holder': 'pod-1', ':expiry': NOW + 5_000, ':now': NOW, ':one': 1 },
      ReturnValues: 'ALL_OLD',
    });
  });

  it('reports a takeover when the lease it took had a holder that never released it', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ Attributes: { holder: 'pod-0', fencingToken: 3, leaseExpiry: NOW - 1 } });
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));

    // Act
    const lease = await store.acquire('k', 'pod-1', 5_000);

    // Assess
    expect(lease).toEqual({ key: 'k', holder: 'pod-1', fencingToken: 4, expiresAt: NOW + 5_000, takenOver: true });
  });

  it('counts the first acquisition of a key as token 1', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    await expect(store.acquire('new', 'pod-1', 5_000)).resolves.toMatchObject({ fencingToken: 1 });
  });

  it('returns undefined when the condition fails (someone else holds it)', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    await expect(store.acquire('k', 'pod-2', 5_000)).resolves.toBeUndefined();
  });

  it.each([
    ['ProvisionedThroughputExceededException', new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }), ThrottledError],
    ['ThrottlingException', serviceError('ThrottlingException', 'client', 400), ThrottledError],
    ['RequestLimitExceeded', serviceError('RequestLimitExceeded', 'client', 400), ThrottledError],
    ['InternalServerError', new InternalServerError({ message: 'boom', $metadata: {} }), UnavailableError],
    ['HTTP 503', serviceError('ServiceUnavailable', 'server', 503), UnavailableError],
    ['connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), UnavailableError],
    ['ValidationException', serviceError('ValidationException', 'client', 400), InvalidInputError],
  ])('maps %s to %O, keeping the cause', async (_label, failure, expected) => {
    ddbMock.on(UpdateCommand).rejects(failure);
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    const error = await store.acquire('k', 'pod-1', 5_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(expected);
    expect((error as Error).cause).toBe(failure);
    expect((error as Error).message).toContain('acquire lease k');
  });
});

describe('Method: renew', () => {
  it('throws LeaseLostError when holder or token no longer match', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    const lease = { key: 'k', holder: 'pod-1', fencingToken: 3, expiresAt: NOW };
    await expect(store.renew(lease, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
    expect(ddbMock).toReceiveCommandWith(UpdateCommand, {
      ConditionExpression: 'holder = :holder AND fencingToken = :token',
      ExpressionAttributeValues: { ':holder': 'pod-1', ':token': 3, ':expiry': NOW + 1_000 },
    });
  });
});

describe('Method: renew and release, on failures other than the condition', () => {
  const lease = { key: 'k', holder: 'pod-1', fencingToken: 3, expiresAt: NOW };

  it('says which lease was lost, keeping the refusal as the cause', async () => {
    const refusal = conditionFailed();
    ddbMock.on(UpdateCommand).rejects(refusal);
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    const error = await store.renew(lease, 1_000).catch((e: unknown) => e);
    expect((error as Error).message).toBe('lease k (token 3) is no longer held by pod-1');
    expect((error as Error).cause).toBe(refusal);
  });

  it.each([
    ['renew', (store: DynamoLeaseStore) => store.renew(lease, 1_000)],
    ['release', (store: DynamoLeaseStore) => store.release(lease)],
  ])('%s: an outage is an outage to retry, not a lost lease nor a silent success', async (verb, call) => {
    const failure = new InternalServerError({ message: 'boom', $metadata: {} });
    ddbMock.on(UpdateCommand).rejects(failure);
    const error = await call(new DynamoLeaseStore(documentClient, new FakeClock(NOW))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain(`${verb} lease k`);
  });

  it('release: a lease someone else holds now is left alone without an error', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    await expect(new DynamoLeaseStore(documentClient, new FakeClock(NOW)).release(lease)).resolves.toBeUndefined();
  });
});

describe('Method: tryAcquire', () => {
  it.each([
    ['the holder\'s expiry, as DynamoDB returns it', { leaseExpiry: { N: String(NOW + 4_000) } }, NOW + 4_000],
    ['nothing when the refusal carries no item', undefined, undefined],
    ['nothing when the item has no expiry', { holder: { S: 'pod-0' } }, undefined],
  ])('on a refusal reports %s', async (_label, item, heldUntil) => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed(item));
    const store = new DynamoLeaseStore(documentClient, new FakeClock(NOW));
    await expect(store.tryAcquire('k', 'pod-2', 5_000)).resolves.toEqual({ heldUntil });
  });
});

describe('Method: claim', () => {
  it('claims with one conditional put asking for the old record on failure', async () => {
    ddbMock.on(PutCommand).resolves({});
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW), { tableName: 't' });

    await expect(store.claim('runtime-sync#east#uid-1#t1', { inProgressTtlMs: 60_000, recordTtlSeconds: 86_400 })).resolves.toEqual({
      state: 'claimed',
    });

    expect(ddbMock).toReceiveCommandWith(PutCommand, {
      TableName: 't',
      Item: {
        pk: 'IDEMPOTENCY#runtime-sync#east#uid-1#t1',
        sk: 'IDEMPOTENCY',
        status: 'INPROGRESS',
        inProgressExpiry: NOW + 60_000,
        expiresAt: NOW / 1000 + 86_400,
        recordTtlSeconds: 86_400,
      },
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR (#status = :inProgress AND inProgressExpiry < :nowMs)',
      ExpressionAttributeValues: { ':now': NOW / 1000, ':nowMs': NOW, ':inProgress': 'INPROGRESS' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('reports a completed duplicate from the returned record, without a second read', async () => {
    ddbMock.on(PutCommand).rejects(conditionFailed({ status: { S: 'COMPLETED' }, result: { S: '{"pinned":"cr-a-12345678"}' } }));
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW));

    const claim = await store.claim('k', { inProgressTtlMs: 1_000, recordTtlSeconds: 60 });

    expect(claim).toEqual({ state: 'completed', result: { pinned: 'cr-a-12345678' } });
    expect(ddbMock).not.toHaveReceivedCommand(GetCommand);
  });

  it('reports an in-progress duplicate from the returned record', async () => {
    ddbMock.on(PutCommand).rejects(conditionFailed({ status: { S: 'INPROGRESS' }, inProgressExpiry: { N: String(NOW + 1) } }));
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW));
    await expect(store.claim('k', { inProgressTtlMs: 1_000, recordTtlSeconds: 60 })).resolves.toEqual({ state: 'in-progress' });
  });

  it('maps throttling of the claim to ThrottledError', async () => {
    ddbMock.on(PutCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW));
    await expect(store.claim('k', { inProgressTtlMs: 1_000, recordTtlSeconds: 60 })).rejects.toBeInstanceOf(ThrottledError);
  });
});

describe('Method: complete', () => {
  it('treats a record another worker completed as done', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed({ status: { S: 'COMPLETED' } }));
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW));
    await expect(store.complete('k', 1)).resolves.toBeUndefined();
  });

  it('throws ConflictError when there is no claim at all', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW));
    await expect(store.complete('k', 1)).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('IdempotencyStore: a refusal without the record, and outages', () => {
  const options = { inProgressTtlMs: 1_000, recordTtlSeconds: 60 };
  const outage = (): InternalServerError => new InternalServerError({ message: 'boom', $metadata: {} });

  it('reads the record it collided with, consistently, when the refusal does not carry it', async () => {
    ddbMock.on(PutCommand).rejects(conditionFailed());
    ddbMock.on(GetCommand).resolves({ Item: { status: 'COMPLETED', result: '"done"' } });
    const store = new DynamoIdempotencyStore(documentClient, new FakeClock(NOW), { tableName: 't' });
    await expect(store.claim('k', options)).resolves.toEqual({ state: 'completed', result: 'done' });
    expect(ddbMock).toReceiveCommandWith(GetCommand, { TableName: 't', Key: { pk: 'IDEMPOTENCY#k', sk: 'IDEMPOTENCY' }, ConsistentRead: true });
  });

  it('calls a record that vanished between the refusal and the read in progress, so the delivery retries', async () => {
    ddbMock.on(PutCommand).rejects(conditionFailed());
    ddbMock.on(GetCommand).resolves({});
    await expect(new DynamoIdempotencyStore(documentClient, new FakeClock(NOW)).claim('k', options)).resolves.toEqual({ state: 'in-progress' });
  });

  it('keeps the refusal as the cause of a payload mismatch', async () => {
    const refusal = conditionFailed({ status: { S: 'COMPLETED' }, payloadHash: { S: 'a' } });
    ddbMock.on(PutCommand).rejects(refusal);
    const error = await new DynamoIdempotencyStore(documentClient, new FakeClock(NOW)).claim('k', { ...options, payloadHash: 'b' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyPayloadMismatchError);
    expect((error as Error).cause).toBe(refusal);
  });

  it.each([
    ['claim', () => ddbMock.on(PutCommand).rejects(outage()), (store: DynamoIdempotencyStore) => store.claim('k', options)],
    // The read happens only after a refused claim that did not carry the record.
    ['read', () => ddbMock.on(PutCommand).rejects(conditionFailed()).on(GetCommand).rejects(outage()), (store: DynamoIdempotencyStore) => store.claim('k', options)],
    ['complete', () => ddbMock.on(UpdateCommand).rejects(outage()), (store: DynamoIdempotencyStore) => store.complete('k', 1)],
    ['abandon', () => ddbMock.on(DeleteCommand).rejects(outage()), (store: DynamoIdempotencyStore) => store.abandon('k')],
  ])('%s: an outage is an outage to retry, named after the key, never a conflict nor a silent success', async (verb, failing, call) => {
    failing();
    const error = await call(new DynamoIdempotencyStore(documentClient, new FakeClock(NOW))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain(`${verb} idempotency key k`);
  });

  it('abandon: a claim already completed or taken over is left alone without an error', async () => {
    ddbMock.on(DeleteCommand).rejects(conditionFailed());
    await expect(new DynamoIdempotencyStore(documentClient, new FakeClock(NOW)).abandon('k', 'worker-1')).resolves.toBeUndefined();
  });
});

describe('Method: saveCheckpoints', () => {
  it('writes the item with the lease it was saved under, in a BatchWriteItem without a condition', async () => {
    ddbMock.on(BatchWriteCommand).resolves({});
    const store = new DynamoCheckpointStore(documentClient, new FakeClock(NOW), { tableName: 't', checkpointSaveWindowMs: 0 });
    const lease = { key: 'forwarder-shard#4/1', holder: 'pod-1', fencingToken: 4, expiresAt: NOW + 1 };

    await store.saveCheckpoints('east', { inferenceservices: '42' }, lease);

    expect(ddbMock).toReceiveCommandWith(BatchWriteCommand, {
      RequestItems: { t: [{ PutRequest: { Item: { pk: 'CHECKPOINT#east', sk: '#checkpoints', checkpoints: { inferenceservices: '42' }, fencingToken: 4, leaseKey: 'forwarder-shard#4/1', updatedAt: NOW } } }] },
    });
  });

  it('refuses a save under a lease that has expired, at its expiry instant, without a call', async () => {
    const store = new DynamoCheckpointStore(documentClient, new FakeClock(NOW), { checkpointSaveWindowMs: 0 });
    const lease = { key: 'forwarder-shard#4/1', holder: 'pod-1', fencingToken: 4, expiresAt: NOW };

    await expect(store.saveCheckpoints('east', { inferenceservices: '42' }, lease)).rejects.toThrow(
      new LeaseLostError('checkpoints of east not saved: lease forwarder-shard#4/1 token 4 expired before the write'),
    );
    expect(ddbMock.commandCalls(BatchWriteCommand)).toHaveLength(0);
  });

  it('refuses a save whose lease expired while it waited for the batch, without a call', async () => {
    // Prepare: live when asked; the process stalls past the expiry before the batch goes out
    const clock = new FakeClock(NOW);
    const store = new DynamoCheckpointStore(documentClient, clock, { checkpointSaveWindowMs: 0 });
    const lease = { key: 'forwarder-shard#4/1', holder: 'pod-1', fencingToken: 4, expiresAt: NOW + 1_000 };

    // Act
    const saved = store.saveCheckpoints('east', { inferenceservices: '42' }, lease);
    clock.advance(1_000);

    // Assess
    await expect(saved).rejects.toBeInstanceOf(LeaseLostError);
    expect(ddbMock.commandCalls(BatchWriteCommand)).toHaveLength(0);
  });
});

describe('Function: mapDynamoError', () => {
  it('makes refused requests (access denied) terminal', () => {
    const error = mapDynamoError(serviceError('AccessDeniedException', 'client', 400), 'get cluster east');
    expect(error).toBeInstanceOf(ControlPlaneError);
    expect(error.retryable).toBe(false);
  });

  it('treats a missing table as an outage, to be retried', () => {
    expect(mapDynamoError(serviceError('ResourceNotFoundException', 'client', 400), 'x')).toBeInstanceOf(UnavailableError);
  });
});
