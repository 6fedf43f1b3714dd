/**
 * What IAM authorises for one DynamoDB JSON API call (`X-Amz-Target: DynamoDB_20120810.<Op>`):
 * the action, the table (or index) ARN and the condition keys our policies use, above all
 * `dynamodb:LeadingKeys`, the partition key values the call touches. A transaction is
 * authorised item by item (PutItem, UpdateItem, DeleteItem, ConditionCheckItem, GetItem),
 * as AWS does; a batch is one request per table carrying all of its keys. Pure module.
 */
import type { AuthorizationRequest } from './policy';

export const DYNAMODB_TARGET_PREFIX = 'DynamoDB_20120810.';

export interface DynamoRequestScope {
  region: string;
  accountId: string;
  /** The table's partition key attribute (ours: `pk`). */
  partitionKey: string;
  partition?: string;
}

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;

interface RequestBody {
  TableName?: string;
  IndexName?: string;
  Key?: Item;
  Item?: Item;
  KeyConditionExpression?: string;
  KeyConditions?: Record<string, { AttributeValueList?: AttributeValue[]; ComparisonOperator?: string }>;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
  ReturnValues?: string;
  Select?: string;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Array<Record<string, RequestBody>>;
}

/** The scalar text of an attribute value (`S`, `N` or `B`), as IAM compares it. */
function scalarOf(value: AttributeValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  for (const type of ['S', 'N', 'B']) {
    const scalar = value[type];
    if (typeof scalar === 'string') return scalar;
  }
  return undefined;
}

/** The partition key value a Query names: `pk = :v` (or `#n = :v`) in its key condition. */
function queryPartitionValue(body: RequestBody, partitionKey: string): string | undefined {
  if (body.KeyConditions !== undefined) {
    const condition = body.KeyConditions[partitionKey];
    return condition?.ComparisonOperator === 'EQ' ? scalarOf(condition.AttributeValueList?.[0]) : undefined;
  }
  const expression = body.KeyConditionExpression ?? '';
  const nameOf = (token: string): string => (token.startsWith('#') ? (body.ExpressionAttributeNames?.[token] ?? token) : token);
  for (const match of expression.matchAll(/([#:]?[\w.-]+)\s*=\s*([#:]?[\w.-]+)/g)) {
    const [, left = '', right = ''] = match;
    const [name, placeholder] = left.startsWith(':') ? [right, left] : [left, right];
    if (nameOf(name) === partitionKey && placeholder.startsWith(':')) return scalarOf(body.ExpressionAttributeValues?.[placeholder]);
  }
  return undefined;
}

function leadingKeys(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}

function tableArn(scope: DynamoRequestScope, tableName: string | undefined, indexName?: string): string {
  const base = `arn:${scope.partition ?? 'aws'}:dynamodb:${scope.region}:${scope.accountId}:table/${tableName ?? '*'}`;
  return indexName === undefined ? base : `${base}/index/${indexName}`;
}

function singleItemRequest(action: string, body: RequestBody, scope: DynamoRequestScope, key: Item | undefined): AuthorizationRequest {
  const context: Record<string, string[]> = { 'dynamodb:LeadingKeys': leadingKeys([scalarOf(key?.[scope.partitionKey])]) };
  if (body.ReturnValues !== undefined) context['dynamodb:ReturnValues'] = [body.ReturnValues];
  return { action: `dynamodb:${action}`, resource: tableArn(scope, body.TableName), context };
}

const TRANSACT_WRITE_ACTIONS: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

/**
 * The authorisation requests for one call; each must be allowed for the call to go through.
 * `operation` is the part of `X-Amz-Target` after the version prefix.
 */
export function authorizationRequestsFor(operation: string, body: RequestBody, scope: DynamoRequestScope): AuthorizationRequest[] {
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [singleItemRequest(operation, body, scope, body.Key)];
    case 'PutItem':
      return [singleItemRequest(operation, body, scope, body.Item)];
    case 'Query': {
      const context: Record<string, string[]> = { 'dynamodb:LeadingKeys': leadingKeys([queryPartitionValue(body, scope.partitionKey)]) };
      if (body.Select !== undefined) context['dynamodb:Select'] = [body.Select];
      return [{ action: 'dynamodb:Query', resource: tableArn(scope, body.TableName, body.IndexName), context }];
    }
    case 'BatchGetItem':
      return Object.entries(body.RequestItems ?? {}).map(([table, request]) => ({
        action: 'dynamodb:BatchGetItem',
        resource: tableArn(scope, table),
        context: { 'dynamodb:LeadingKeys': leadingKeys(((request as { Keys?: Item[] }).Keys ?? []).map((key) => scalarOf(key[scope.partitionKey]))) },
      }));
    case 'BatchWriteItem':
      return Object.entries(body.RequestItems ?? {}).map(([table, writes]) => ({
        action: 'dynamodb:BatchWriteItem',
        resource: tableArn(scope, table),
        context: {
          'dynamodb:LeadingKeys': leadingKeys(
            (writes as Array<{ PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }>).map((write) =>
              scalarOf((write.PutRequest?.Item ?? write.DeleteRequest?.Key)?.[scope.partitionKey]),
            ),
          ),
        },
      }));
    case 'TransactWriteItems':
      return (body.TransactItems ?? []).flatMap((entry) =>
        Object.entries(entry).map(([kind, item]) =>
          singleItemRequest(TRANSACT_WRITE_ACTIONS[kind] ?? kind, item, scope, kind === 'Put' ? item.Item : item.Key),
        ),
      );
    case 'TransactGetItems':
      return (body.TransactItems ?? []).flatMap((entry) => Object.values(entry).map((item) => singleItemRequest('GetItem', item, scope, item.Key)));
    default:
      // Table-level and account-level calls (DescribeTable, Scan, ListTables, …): no item keys.
      return [{ action: `dynamodb:${operation}`, resource: tableArn(scope, body.TableName, body.IndexName), context: {} }];
  }
}
