/**
 * The batched checkpoint loads' and saves' fault paths, over a mocked DynamoDB client
 * (DynamoDB Local never leaves keys unprocessed): keys or items DynamoDB left unprocessed are
 * asked again; keys still unprocessed after the last attempt are read from their partition,
 * items still unwritten fail their saves; a cluster asked for twice in one turn is read
 * once; a failed batch fails every load or save it held.
 * test/store/checkpoints.test.ts has the happy paths against DynamoDB Local.
 */
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClient, DynamoCheckpointStore } from '../../shared/adapters/dynamodb';

const documentClient = createDynamoClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });
const ddbMock = mockClient(DynamoDBDocumentClient);
const TABLE = 't';

const keyOf = (clusterId: string) => ({ pk: `CHECKPOINT#${clusterId}`, sk: '#checkpoints' });
const itemOf = (clusterId: string, resourceVersion: string) => ({ ...keyOf(clusterId), checkpoints: { inferenceservices: resourceVersion } });
const store = () => new DynamoCheckpointStore(documentClient, undefined, { tableName: TABLE, checkpointSaveWindowMs: 0 });
const lease = { key: 'forwarder-shard#1/0', holder: 'h', fencingToken: 3, expiresAt: Date.now() + 60_000 };
const putOf = (clusterId: string, resourceVersion: string) => ({
  PutRequest: { Item: { ...keyOf(clusterId), checkpoints: { inferenceservices: resourceVersion }, fencingToken: 3, leaseKey: lease.key, updatedAt: expect.any(Number) } },
});
const throttled = () => Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: { httpStatusCode: 400 } });

beforeEach(() => {
  ddbMock.reset();
});

describe('DynamoCheckpointStore: batched loads', () => {
  it('asks again for the keys DynamoDB left unprocessed', async () => {
    ddbMock
      .on(BatchGetCommand)
      .resolvesOnce({ Responses: { [TABLE]: [itemOf('a', '1')] }, UnprocessedKeys: { [TABLE]: { Keys: [keyOf('b')] } } })
      .resolvesOnce({ Responses: { [TABLE]: [itemOf('b', '2')] } });

    const checkpoints = store();

    const loaded = await Promise.all(['a', 'b'].map((clusterId) => checkpoints.loadCheckpoints(clusterId)));

    expect(loaded).toEqual([{ inferenceservices: '1' }, { inferenceservices: '2' }]);
    expect(ddbMock.commandCalls(BatchGetCommand).map((call) => call.args[0].input.RequestItems?.[TABLE]?.Keys)).toEqual([[keyOf('a'), keyOf('b')], [keyOf('b')]]);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('reads a key still unprocessed after the last attempt from its partition', async () => {
    ddbMock.on(BatchGetCommand).resolves({ Responses: { [TABLE]: [] }, UnprocessedKeys: { [TABLE]: { Keys: [keyOf('a')] } } });
    ddbMock.on(QueryCommand).resolves({ Items: [itemOf('a', '7')] });

    expect(await store().loadCheckpoints('a')).toEqual({ inferenceservices: '7' });
    expect(ddbMock.commandCalls(BatchGetCommand)).toHaveLength(4);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('reads a cluster asked for twice in one turn once, and answers both', async () => {
    ddbMock.on(BatchGetCommand).resolves({ Responses: { [TABLE]: [] } });
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    const checkpoints = store();

    const loaded = await Promise.all([checkpoints.loadCheckpoints('a'), checkpoints.loadCheckpoints('a')]);

    expect(loaded).toEqual([{}, {}]);
    expect(ddbMock.commandCalls(BatchGetCommand).map((call) => call.args[0].input.RequestItems?.[TABLE]?.Keys)).toEqual([[keyOf('a')]]);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('fails every load of a batch DynamoDB refused, and the next turn reads afresh', async () => {
    ddbMock
      .on(BatchGetCommand)
      .rejectsOnce(throttled())
      .resolves({ Responses: { [TABLE]: [itemOf('a', '3')] } });
    const checkpoints = store();

    const first = await Promise.allSettled([checkpoints.loadCheckpoints('a'), checkpoints.loadCheckpoints('b')]);
    const again = await checkpoints.loadCheckpoints('a');

    expect(first.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(again).toEqual({ inferenceservices: '3' });
  });
});

describe('DynamoCheckpointStore: batched saves', () => {
  it('writes again the items DynamoDB left unprocessed, and settles each save once written', async () => {
    ddbMock
      .on(BatchWriteCommand)
      .resolvesOnce({ UnprocessedItems: { [TABLE]: [{ PutRequest: { Item: { ...keyOf('b'), checkpoints: { inferenceservices: '2' } } } }] } })
      .resolvesOnce({});
    const checkpoints = store();

    await Promise.all([checkpoints.saveCheckpoints('a', { inferenceservices: '1' }, lease), checkpoints.saveCheckpoints('b', { inferenceservices: '2' }, lease)]);

    const written = ddbMock.commandCalls(BatchWriteCommand).map((call) => call.args[0].input.RequestItems?.[TABLE]);
    expect(written).toEqual([[putOf('a', '1'), putOf('b', '2')], [{ PutRequest: { Item: { ...keyOf('b'), checkpoints: { inferenceservices: '2' } } } }]]);
  });

  it('fails the saves still unwritten after the last attempt, and only those', async () => {
    ddbMock
      .on(BatchWriteCommand)
      .resolvesOnce({ UnprocessedItems: { [TABLE]: [putOf('b', '2')] } })
      .resolves({ UnprocessedItems: { [TABLE]: [putOf('b', '2')] } });
    const checkpoints = store();

    const saved = await Promise.allSettled([checkpoints.saveCheckpoints('a', { inferenceservices: '1' }, lease), checkpoints.saveCheckpoints('b', { inferenceservices: '2' }, lease)]);

    expect(saved.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    expect(String((saved[1] as PromiseRejectedResult).reason)).toContain('left the checkpoints of 1 cluster(s) unwritten after 4 calls (throttled)');
    expect(ddbMock.commandCalls(BatchWriteCommand)).toHaveLength(4);
  });

  it('fails every save of a batch DynamoDB refused; the next save writes afresh', async () => {
    ddbMock.on(BatchWriteCommand).rejectsOnce(throttled()).resolves({});
    const checkpoints = store();

    const first = await Promise.allSettled([checkpoints.saveCheckpoints('a', { inferenceservices: '1' }, lease), checkpoints.saveCheckpoints('b', { inferenceservices: '1' }, lease)]);
    await checkpoints.saveCheckpoints('a', { inferenceservices: '2' }, lease);

    expect(first.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(ddbMock.commandCalls(BatchWriteCommand).at(-1)?.args[0].input.RequestItems?.[TABLE]).toEqual([putOf('a', '2')]);
  });

  it('writes a cluster saved twice in one window once, with the later positions', async () => {
    ddbMock.on(BatchWriteCommand).resolves({});
    const checkpoints = store();

    await Promise.all([checkpoints.saveCheckpoints('a', { inferenceservices: '1' }, lease), checkpoints.saveCheckpoints('a', { inferenceservices: '5' }, lease)]);

    expect(ddbMock.commandCalls(BatchWriteCommand).map((call) => call.args[0].input.RequestItems?.[TABLE])).toEqual([[putOf('a', '5')]]);
  });

  it('writes sooner than its window when a lease would run out first, so a live lease\'s save is not refused for the wait', async () => {
    ddbMock.on(BatchWriteCommand).resolves({});
    const checkpoints = new DynamoCheckpointStore(documentClient, undefined, { tableName: TABLE, checkpointSaveWindowMs: 10_000 });
    const startedAt = Date.now();

    await checkpoints.saveCheckpoints('a', { inferenceservices: '1' }, { ...lease, expiresAt: Date.now() + 400 });

    expect(Date.now() - startedAt).toBeLessThan(400);
    expect(ddbMock.commandCalls(BatchWriteCommand)).toHaveLength(1);
  });
});
