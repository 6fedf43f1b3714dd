/** What IAM is asked for each DynamoDB call shape: action, resource and leading keys. */
import { describe, expect, it } from 'vitest';
import { authorizationRequestsFor } from '../../local/iam/dynamodb-request';

const SCOPE = { region: 'eu-west-1', accountId: '000000000000', partitionKey: 'pk' };
const TABLE = 'arn:aws:dynamodb:eu-west-1:000000000000:table/t';
const key = (pk: string, sk = 'x') => ({ pk: { S: pk }, sk: { S: sk } });

describe('Function: authorizationRequestsFor', () => {
  it.each([
    ['GetItem', { TableName: 't', Key: key('REGISTRY') }, 'dynamodb:GetItem', ['REGISTRY']],
    ['PutItem', { TableName: 't', Item: { ...key('CHECKPOINT#c1'), resourceVersion: { S: '7' } } }, 'dynamodb:PutItem', ['CHECKPOINT#c1']],
    ['UpdateItem', { TableName: 't', Key: key('LEASE#k'), UpdateExpression: 'SET a = :a' }, 'dynamodb:UpdateItem', ['LEASE#k']],
    ['DeleteItem', { TableName: 't', Key: key('IDEMPOTENCY#k') }, 'dynamodb:DeleteItem', ['IDEMPOTENCY#k']],
    ['Query', { TableName: 't', KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': { S: 'REGISTRY' }, ':prefix': { S: 'CLUSTER#' } } }, 'dynamodb:Query', ['REGISTRY']],
    ['Query', { TableName: 't', KeyConditionExpression: 'begins_with(sk, :p) AND #k=:v', ExpressionAttributeNames: { '#k': 'pk' }, ExpressionAttributeValues: { ':p': { S: 'C' }, ':v': { S: 'LEASE#a' } } }, 'dynamodb:Query', ['LEASE#a']],
    ['Query', { TableName: 't', KeyConditionExpression: ':v = pk', ExpressionAttributeValues: { ':v': { S: 'REGISTRY' } } }, 'dynamodb:Query', ['REGISTRY']],
    ['Query', { TableName: 't', KeyConditions: { pk: { AttributeValueList: [{ S: 'REGISTRY' }], ComparisonOperator: 'EQ' } } }, 'dynamodb:Query', ['REGISTRY']],
    ['Scan', { TableName: 't' }, 'dynamodb:Scan', undefined],
  ])('%s %j', (operation, body, action, leadingKeys) => {
    // Act
    const requests = authorizationRequestsFor(operation, body, SCOPE);

    // Assess
    expect(requests).toHaveLength(1);
    expect(requests[0]?.action).toBe(action);
    expect(requests[0]?.resource).toBe(TABLE);
    expect(requests[0]?.context?.['dynamodb:LeadingKeys']).toEqual(leadingKeys);
  });

  it('names the index of a Query on one', () => {
    const [request] = authorizationRequestsFor('Query', { TableName: 't', IndexName: 'byHolder', KeyConditionExpression: 'pk = :v', ExpressionAttributeValues: { ':v': { S: 'REGISTRY' } } }, SCOPE);
    expect(request?.resource).toBe(`${TABLE}/index/byHolder`);
  });

  it('carries ReturnValues for the statements that restrict it', () => {
    const [request] = authorizationRequestsFor('UpdateItem', { TableName: 't', Key: key('LEASE#k'), ReturnValues: 'ALL_NEW' }, SCOPE);
    expect(request?.context?.['dynamodb:ReturnValues']).toEqual(['ALL_NEW']);
  });

  it('authorises a write transaction item by item, with each item\'s own action', () => {
    // Act
    const requests = authorizationRequestsFor(
      'TransactWriteItems',
      {
        TransactItems: [
          { Put: { TableName: 't', Item: key('IDEMPOTENCY#a') } },
          { Update: { TableName: 't', Key: key('LEASE#b') } },
          { Delete: { TableName: 'u', Key: key('CHECKPOINT#c') } },
          { ConditionCheck: { TableName: 't', Key: key('REGISTRY') } },
        ],
      },
      SCOPE,
    );

    // Assess
    expect(requests.map((r) => [r.action, r.resource.split('/')[1], r.context?.['dynamodb:LeadingKeys']])).toEqual([
      ['dynamodb:PutItem', 't', ['IDEMPOTENCY#a']],
      ['dynamodb:UpdateItem', 't', ['LEASE#b']],
      ['dynamodb:DeleteItem', 'u', ['CHECKPOINT#c']],
      ['dynamodb:ConditionCheckItem', 't', ['REGISTRY']],
    ]);
  });

  it('authorises a read transaction as GetItem per item', () => {
    const requests = authorizationRequestsFor('TransactGetItems', { TransactItems: [{ Get: { TableName: 't', Key: key('REGISTRY') } }, { Get: { TableName: 't', Key: key('LEASE#x') } }] }, SCOPE);
    expect(requests.map((r) => [r.action, r.context?.['dynamodb:LeadingKeys']])).toEqual([
      ['dynamodb:GetItem', ['REGISTRY']],
      ['dynamodb:GetItem', ['LEASE#x']],
    ]);
  });

  it('authorises a batch once per table with all of its partition keys', () => {
    // Act
    const writes = authorizationRequestsFor(
      'BatchWriteItem',
      { RequestItems: { t: [{ PutRequest: { Item: key('LEASE#a') } }, { DeleteRequest: { Key: key('REGISTRY') } }, { PutRequest: { Item: key('LEASE#a', 'y') } }] } },
      SCOPE,
    );
    const reads = authorizationRequestsFor('BatchGetItem', { RequestItems: { t: { Keys: [key('REGISTRY'), key('CHECKPOINT#c')] }, u: { Keys: [key('LEASE#z')] } } }, SCOPE);

    // Assess
    expect(writes).toEqual([{ action: 'dynamodb:BatchWriteItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['LEASE#a', 'REGISTRY'] } }]);
    expect(reads.map((r) => [r.resource.split('/')[1], r.context?.['dynamodb:LeadingKeys']])).toEqual([
      ['t', ['REGISTRY', 'CHECKPOINT#c']],
      ['u', ['LEASE#z']],
    ]);
  });

  it('asks for table-level calls on the table, without keys', () => {
    expect(authorizationRequestsFor('DescribeTable', { TableName: 't' }, SCOPE)).toEqual([{ action: 'dynamodb:DescribeTable', resource: TABLE, context: {} }]);
    expect(authorizationRequestsFor('ListTables', {}, SCOPE)[0]?.resource).toBe('arn:aws:dynamodb:eu-west-1:000000000000:table/*');
  });
});
