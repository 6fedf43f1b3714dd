/**
 * DynamoDB Local with the table of serverless.yml, behind the IAM-enforcing proxy that knows
 * every function by its access key id; and clients signed as any of them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { join } from 'node:path';
import { identitiesFromTemplate, startDynamoIamProxy } from '../../local/iam/dynamodb-proxy';
import type { DynamoIamProxy, ProxyDecision } from '../../local/iam/dynamodb-proxy';
import { loadTemplateRoles } from '../../local/iam/template-roles';
import type { TemplateRoles } from '../../local/iam/template-roles';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import type { DynamoDbLocal } from '../../local/dynamodb-local';
import { REPOSITORY_ROOT } from '../../scripts/build';
import { expect } from 'vitest';
import { createDynamoClient, createDynamoStores, ensureTable } from '../../shared/adapters/dynamodb';
import { ControlPlaneError } from '../../shared/domain/errors';
import type { Stores } from '../../shared/ports/store';

/** The access key id a function signs with: letters only, as AWS key ids are. */
export const accessKeyIdOf = (functionName: string): string => `LOCAL${functionName.toUpperCase().replace(/-/g, '')}`;

const LOCAL_REQUEST_TIMEOUT_MS = 30_000;

export interface IamWorld {
  roles: TemplateRoles;
  proxy: DynamoIamProxy;
  /** Straight to DynamoDB Local, as the stack and an operator's registration write. */
  direct: DynamoDBDocumentClient;
  /** A client through the proxy, signed as `functionName` (or another key id). */
  clientAs(functionName: string, accessKeyId?: string): DynamoDBDocumentClient;
  storesAs(functionName: string, accessKeyId?: string): Stores;
  /** The proxy's decisions on calls signed as `functionName`, from index `since` on. */
  decisionsOf(functionName: string, since?: number): ProxyDecision[];
  stop(): Promise<void>;
}

export async function startIamWorld(): Promise<IamWorld> {
  const roles = await loadTemplateRoles(join(REPOSITORY_ROOT, 'serverless.yml'));
  let dynamo: DynamoDbLocal | undefined;
  let proxy: DynamoIamProxy | undefined;
  try {
    dynamo = await startDynamoDbLocal();
    // DynamoDB Local on a busy machine can take seconds to answer; that is not what is tested.
    const direct = createDynamoClient({ region: roles.region, endpoint: dynamo.endpoint, requestTimeoutMs: LOCAL_REQUEST_TIMEOUT_MS });
    await ensureTable(direct, roles.tableName);
    const started = await startDynamoIamProxy({ upstream: dynamo.endpoint, identities: identitiesFromTemplate(roles, accessKeyIdOf), accountId: roles.accountId });
    proxy = started;
    const local = dynamo;
    const clientAs = (functionName: string, accessKeyId = accessKeyIdOf(functionName)) =>
      // One attempt: a refusal is final, and a test must see it at once.
      createDynamoClient({
        region: roles.region,
        endpoint: started.endpoint,
        credentials: { accessKeyId, secretAccessKey: 'local' },
        maxAttempts: 1,
        requestTimeoutMs: LOCAL_REQUEST_TIMEOUT_MS,
      });
    return {
      roles,
      proxy: started,
      direct,
      clientAs,
      storesAs: (functionName, accessKeyId) => createDynamoStores(clientAs(functionName, accessKeyId), { tableName: roles.tableName }),
      decisionsOf: (functionName, since = 0) => started.decisions.slice(since).filter((decision) => decision.accessKeyId === accessKeyIdOf(functionName)),
      async stop() {
        await started.close();
        await local.stop();
      },
    };
  } catch (error) {
    await proxy?.close();
    await dynamo?.stop();
    throw error;
  }
}

/** AccessDeniedException from the proxy, mapped by the adapter to a terminal ControlPlaneError. */
export function expectAccessDenied(error: unknown, name: string): void {
  expect(error).toBeInstanceOf(ControlPlaneError);
  expect((error as ControlPlaneError).retryable).toBe(false);
  const cause = (error as { cause?: { name?: string; message?: string } }).cause;
  expect(cause?.name).toBe('AccessDeniedException');
  expect(cause?.message).toMatch(new RegExp(`^User: arn:aws:sts::\\d+:assumed-role/[\\w-]+/ome-pinning-dev-${name} is not authorized to perform: dynamodb:\\w+ on resource: arn:aws:dynamodb:`));
}
