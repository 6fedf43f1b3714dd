import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';

describe('Function: loadConfig', () => {
  it('fills in the documented defaults', () => {
    const config = loadConfig({ TABLE_NAME: 't' });
    expect(config).toMatchObject({
      tableName: 't',
      omeNamespace: 'ome',
      revisionRetention: 10,
      revisionGracePeriodMs: 24 * 3_600_000,
      renderWorkloads: true,
      leaseTtlMs: 30_000,
      maxConflictRetries: 5,
    });
    expect(config.dynamoDbEndpoint).toBeUndefined();
  });

  it('reads overrides', () => {
    const config = loadConfig({
      TABLE_NAME: 't',
      OME_NAMESPACE: 'ome-system',
      RUNTIME_REVISION_RETENTION: '3',
      RUNTIME_REVISION_GRACE_PERIOD: '90m',
      RENDER_WORKLOADS: 'false',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      CLUSTER_SECRET_PREFIX: 'ome-pinning/prod/clusters/',
    });
    expect(config).toMatchObject({
      omeNamespace: 'ome-system',
      revisionRetention: 3,
      revisionGracePeriodMs: 90 * 60_000,
      renderWorkloads: false,
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
      clusterSecretPrefix: 'ome-pinning/prod/clusters/',
    });
  });

  it.each([
    [{}, 'TABLE_NAME is not set'],
    [{ TABLE_NAME: 't', RUNTIME_REVISION_RETENTION: '-1' }, 'RUNTIME_REVISION_RETENTION="-1" is not an integer >= 0'],
    [{ TABLE_NAME: 't', RUNTIME_REVISION_RETENTION: 'ten' }, 'RUNTIME_REVISION_RETENTION="ten" is not an integer >= 0'],
    [{ TABLE_NAME: 't', RUNTIME_REVISION_GRACE_PERIOD: '1 day' }, 'RUNTIME_REVISION_GRACE_PERIOD="1 day" is not a duration such as 30s, 5m or 24h'],
    [{ TABLE_NAME: 't', RENDER_WORKLOADS: 'yes' }, 'RENDER_WORKLOADS="yes" must be true or false'],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new InvalidInputError(message));
  });
});

describe('Function: parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['24h', 86_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration('X', text)).toBe(ms);
  });
});
