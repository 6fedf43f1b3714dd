/**
 * Reading the webhook's key: Secrets Manager stages (the current key and any still
 * accepted during a rotation), one read per process, a failed read retried, and settings
 * read from the environment.
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { cacheWebhookKeys, createSecretsManagerWebhookKeyReader } from '../../shared/adapters/webhook-key';
import { loadWebhookConfig } from '../../shared/domain/webhook/webhook-settings';
import { InvalidInputError, NotFoundError } from '../../shared/domain/errors';

const secrets = mockClient(SecretsManagerClient);
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ome-pinning/prod/admission-webhook-key-AbCdEf';
const CURRENT = 'c'.repeat(64);
const PENDING = 'p'.repeat(64);
const notFound = () => new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret value for staging label: AWSPENDING", $metadata: {} });

describe('Method: createSecretsManagerWebhookKeyReader', () => {
  beforeEach(() => {
    secrets.reset();
  });

  it('reads the current key, and a pending one as still accepted', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand, { SecretId: SECRET, VersionStage: 'AWSCURRENT' }).resolves({ SecretString: `${CURRENT}\n` });
    secrets.on(GetSecretValueCommand, { SecretId: SECRET, VersionStage: 'AWSPENDING' }).resolves({ SecretString: PENDING });

    // Act
    const keys = await createSecretsManagerWebhookKeyReader(new SecretsManagerClient({ region: 'eu-west-1' }), SECRET, ['AWSCURRENT', 'AWSPENDING'])();

    // Assess
    expect(keys).toEqual({ current: Buffer.from(CURRENT), accepted: [Buffer.from(PENDING)] });
  });

  it('skips an accepted stage that no longer exists, but not a missing current key', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' }).resolves({ SecretString: CURRENT });
    secrets.on(GetSecretValueCommand, { VersionStage: 'AWSPENDING' }).rejects(notFound());
    const client = new SecretsManagerClient({ region: 'eu-west-1' });

    // Act
    const keys = await createSecretsManagerWebhookKeyReader(client, SECRET, ['AWSCURRENT', 'AWSPENDING'])();
    const missing = createSecretsManagerWebhookKeyReader(client, SECRET, ['AWSPENDING', 'AWSCURRENT'])();

    // Assess
    expect(keys).toEqual({ current: Buffer.from(CURRENT), accepted: [] });
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses a key shorter than 32 bytes without quoting it', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'short-secret' });

    // Act
    const read = createSecretsManagerWebhookKeyReader(new SecretsManagerClient({ region: 'eu-west-1' }), SECRET, ['AWSCURRENT'])();

    // Assess
    await expect(read).rejects.toBeInstanceOf(InvalidInputError);
    await expect(read).rejects.not.toThrow('short-secret');
  });
});

describe('Method: cacheWebhookKeys', () => {
  it('reads once while the read succeeds, and again after a failed read', async () => {
    // Prepare
    let calls = 0;
    const outcomes = [Promise.reject(new Error('throttled')), Promise.resolve({ current: Buffer.from(CURRENT), accepted: [] })];
    outcomes[0]?.catch(() => undefined);
    const keys = cacheWebhookKeys(() => outcomes[Math.min(calls++, 1)]!);

    // Act
    await expect(keys()).rejects.toThrow('throttled');
    const first = await keys();
    const second = await keys();

    // Assess
    expect(calls).toBe(2);
    expect(second).toBe(first);
  });
});

describe('Method: loadWebhookConfig', () => {
  it('defaults to failurePolicy Fail, a 7 s budget and the current stage only', () => {
    expect(loadWebhookConfig({ ADMISSION_WEBHOOK_KEY_SECRET: SECRET })).toEqual({
      failurePolicy: 'Fail',
      timeBudgetMs: 7_000,
      maxBodyBytes: 5 * 1024 * 1024,
      key: { kind: 'secret', secretId: SECRET, stages: ['AWSCURRENT'] },
    });
  });

  it('reads the stages of a rotation, Ignore, a budget and a key file', () => {
    expect(loadWebhookConfig({ ADMISSION_WEBHOOK_KEY_SECRET: SECRET, ADMISSION_WEBHOOK_KEY_STAGES: 'AWSCURRENT, AWSPENDING', ADMISSION_FAILURE_POLICY: 'Ignore', ADMISSION_TIME_BUDGET: '3s' })).toMatchObject({
      failurePolicy: 'Ignore',
      timeBudgetMs: 3_000,
      key: { kind: 'secret', stages: ['AWSCURRENT', 'AWSPENDING'] },
    });
    expect(loadWebhookConfig({ ADMISSION_WEBHOOK_KEY_FILE: '/tmp/key' }).key).toEqual({ kind: 'file', path: '/tmp/key' });
  });

  it.each([
    ['1.5s', 1_500],
    ['2500ms', 2_500],
    ['0.1m', 6_000],
    ['8s999ms', 8_999],
  ])('reads the budget %s as Go does: %d ms', (budget, ms) => {
    expect(loadWebhookConfig({ ADMISSION_WEBHOOK_KEY_FILE: 'k', ADMISSION_TIME_BUDGET: budget }).timeBudgetMs).toBe(ms);
  });

  it.each([
    [{}, 'neither ADMISSION_WEBHOOK_KEY_SECRET nor ADMISSION_WEBHOOK_KEY_FILE is set'],
    [{ ADMISSION_WEBHOOK_KEY_FILE: 'k', ADMISSION_FAILURE_POLICY: 'fail' }, 'ADMISSION_FAILURE_POLICY="fail" must be Fail or Ignore'],
    [{ ADMISSION_WEBHOOK_KEY_FILE: 'k', ADMISSION_TIME_BUDGET: '10s' }, "ADMISSION_TIME_BUDGET=10s must stay below the webhook's timeoutSeconds (10s)"],
    [{ ADMISSION_WEBHOOK_KEY_FILE: 'k', ADMISSION_TIME_BUDGET: '0.2m' }, "ADMISSION_TIME_BUDGET=0.2m must stay below the webhook's timeoutSeconds (10s)"],
    [{ ADMISSION_WEBHOOK_KEY_FILE: 'k', ADMISSION_TIME_BUDGET: '5' }, 'ADMISSION_TIME_BUDGET="5" is not a duration (time: missing unit in duration "5"); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    [{ ADMISSION_WEBHOOK_KEY_SECRET: SECRET, ADMISSION_WEBHOOK_KEY_STAGES: ' , ' }, 'ADMISSION_WEBHOOK_KEY_STAGES names no stage'],
  ])('refuses %j', (env, message) => {
    expect(() => loadWebhookConfig(env)).toThrow(message);
  });
});
