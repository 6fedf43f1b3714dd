/**
 * The batched checkpoint loads' fault paths, over a mocked DynamoDB client (DynamoDB Local
 * never leaves keys unprocessed): keys DynamoDB left unprocessed are asked again, keys still
 * unprocessed after the last attempt are read from their partition, a cluster asked for twice
 * in one turn is read once, and a failed batch fails every load it held.
 * test/store/checkpoints.test.ts has the happy path against DynamoDB Local.
 */
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClient, DynamoCheckpointStore } from '../../shared/adapters/dynamodb';

const documentClient = createDynamoClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });
const ddbMock = mockClient(DynamoDBDocumentClient);
const TABLE = 't';

const keyOf = (clusterId: string) => ({ pk: `CHECKPOINT#${clusterId}`, sk: '#checkpoints' });
const itemOf = (clusterId: string, resourceVersion: string) => ({ ...keyOf(clusterId), checkpoints: { inferenceservices: resourceVersion } });
const store = () => new DynamoCheckpointStore(documentClient, undefined, { tableName: TABLE });

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
      .rejectsOnce(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: { httpStatusCode: 400 } }))
      .resolves({ Responses: { [TABLE]: [itemOf('a', '3')] } });
    const checkpoints = store();

    const first = await Promise.allSettled([checkpoints.loadCheckpoints('a'), checkpoints.loadCheckpoints('b')]);
    const again = await checkpoints.loadCheckpoints('a');

    expect(first.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(again).toEqual({ inferenceservices: '3' });
  });
});
