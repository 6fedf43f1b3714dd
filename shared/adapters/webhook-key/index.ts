/**
 * Reads the admission webhook's key: from Secrets Manager in AWS (the secret the stack
 * creates with a generated value), from a file locally. The key's bytes are the secret's
 * text as stored; nothing here ever puts them in a message.
 */
import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InvalidInputError, NotFoundError } from '../../domain/errors';
import { MIN_WEBHOOK_KEY_BYTES, webhookKeyFromText, type WebhookKeys } from '../../domain/webhook/webhook-token';
import type { OriginSecretSourceConfig, WebhookKeySourceConfig } from '../../domain/webhook/webhook-settings';
import { mapAwsError } from '../aws-credentials/errors';
import { boundedRequestHandler } from '../aws-request-handler';

export type WebhookKeyReader = () => Promise<WebhookKeys>;

function toKey(text: string, where: string): Buffer {
  const key = webhookKeyFromText(text);
  if (!key) throw new InvalidInputError(`the webhook key in ${where} is shorter than ${MIN_WEBHOOK_KEY_BYTES} bytes`);
  return key;
}

/** Reads the key from a file (the local control plane writes it, mode 0600). */
export function createFileWebhookKeyReader(path: string): WebhookKeyReader {
  return async () => ({ current: toKey(await readFile(path, 'utf8'), path), accepted: [] });
}

/**
 * Reads the secret at each stage: the first is the current key, the others are still
 * accepted (a rotation in progress). A missing later stage is skipped, so a rotation's
 * configuration may outlive its staging label.
 */
export function createSecretsManagerWebhookKeyReader(client: SecretsManagerClient, secretId: string, stages: string[]): WebhookKeyReader {
  const readStage = async (stage: string): Promise<Buffer | undefined> => {
    const where = `secret ${secretId} (${stage})`;
    try {
      const output = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
      if (output.SecretString === undefined) throw new InvalidInputError(`the webhook key in ${where} is not a string secret`);
      return toKey(output.SecretString, where);
    } catch (error) {
      const mapped = mapAwsError(error, { action: `read the webhook key ${where}`, permission: 'secretsmanager:GetSecretValue', resource: secretId });
      if (mapped instanceof NotFoundError && stage !== stages[0]) return undefined;
      throw mapped;
    }
  };
  return async () => {
    const [current, ...accepted] = await Promise.all(stages.map(readStage));
    if (!current) throw new NotFoundError(`the webhook key secret ${secretId} has no stage ${stages[0]}`);
    return { current, accepted: accepted.filter((key): key is Buffer => key !== undefined) };
  };
}

/** A secret read answers well inside the API server's webhook timeout, or fails and is retried once. */
const SECRET_READ_TIMEOUTS = boundedRequestHandler({ connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000 });

/** The reader for a configuration; one Secrets Manager client in the function's region. */
export function createWebhookKeyReader(config: WebhookKeySourceConfig, region: string): WebhookKeyReader {
  if (config.kind === 'file') return createFileWebhookKeyReader(config.path);
  return createSecretsManagerWebhookKeyReader(new SecretsManagerClient({ region, maxAttempts: 2, requestHandler: SECRET_READ_TIMEOUTS }), config.secretId, config.stages);
}

/**
 * Reads the front door's origin secret: the text of a Secrets Manager secret (the stack
 * generates it and hands the same value to the distribution), or of a file locally.
 */
export function createOriginSecretReader(config: OriginSecretSourceConfig, region: string): () => Promise<Buffer> {
  if (config.kind === 'file') return async () => toKey(await readFile(config.path, 'utf8'), config.path);
  const client = new SecretsManagerClient({ region, maxAttempts: 2, requestHandler: SECRET_READ_TIMEOUTS });
  return async () => {
    try {
      const output = await client.send(new GetSecretValueCommand({ SecretId: config.secretId }));
      if (output.SecretString === undefined) throw new InvalidInputError(`the origin secret ${config.secretId} is not a string secret`);
      return toKey(output.SecretString, `secret ${config.secretId}`);
    } catch (error) {
      throw mapAwsError(error, { action: `read the origin secret ${config.secretId}`, permission: 'secretsmanager:GetSecretValue', resource: config.secretId });
    }
  };
}

/**
 * Reads once and shares the result (one read per cold start); a failed read is forgotten,
 * so the next request tries again.
 */
export function cacheWebhookKeys<T = WebhookKeys>(read: () => Promise<T>): () => Promise<T> {
  let cached: Promise<T> | undefined;
  return () => {
    if (!cached) {
      const pending = read();
      cached = pending;
      pending.catch(() => {
        if (cached === pending) cached = undefined;
      });
    }
    return cached;
  };
}
