/**
 * Opens the plane's table for the fleet commands from the variables the functions read:
 * TABLE_NAME (default `ome-control-plane`), AWS_REGION and, for `npm start`'s DynamoDB
 * Local, DYNAMODB_ENDPOINT (both printed by `npm start`). Credentials come from the AWS
 * SDK's default chain; the operator's role needs the `FLEET` and `REGISTRY` items
 * (docs/operations.md, "Fleet-wide sync").
 */
import { createDynamoClient, DEFAULT_TABLE_NAME, DynamoClusterRegistry, DynamoFleetStore } from '../../shared/adapters/dynamodb';
import type { FleetAccess } from './fleet';

export function openFleetFromEnv(env: Record<string, string | undefined> = process.env): Promise<FleetAccess> {
  const tableName = env.TABLE_NAME || DEFAULT_TABLE_NAME;
  const client = createDynamoClient({ region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1', ...(env.DYNAMODB_ENDPOINT ? { endpoint: env.DYNAMODB_ENDPOINT } : {}) });
  return Promise.resolve({
    fleet: new DynamoFleetStore(client, { tableName }),
    clusters: new DynamoClusterRegistry(client, { tableName }),
    close: () => client.destroy(),
  });
}
