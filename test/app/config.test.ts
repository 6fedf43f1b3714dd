import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/app/config';
import { InvalidInputError } from '../../shared/domain/errors';

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
    [{ TABLE_NAME: 't', RUNTIME_REVISION_GRACE_PERIOD: '1 day' }, 'RUNTIME_REVISION_GRACE_PERIOD="1 day" is not a duration (time: unknown unit " day" in duration "1 day"); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    [{ TABLE_NAME: 't', RENDER_WORKLOADS: 'yes' }, 'RENDER_WORKLOADS="yes" must be true or false'],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new InvalidInputError(message));
  });

  const LAMBDA = { TABLE_NAME: 't', AWS_LAMBDA_FUNCTION_NAME: 'ome-pinning-prod-pin', POWERTOOLS_SERVICE_NAME: 'pin' };
  it.each<[string, Record<string, string>, { mode: string; functionName?: string }]>([
    ['a Lambda is deployed', LAMBDA, { mode: 'deployed', functionName: 'pin' }],
    ['a Lambda stays deployed when asked for deployed', { ...LAMBDA, CONTROL_PLANE_MODE: 'deployed' }, { mode: 'deployed' }],
    ['npm start and tests are local', { TABLE_NAME: 't' }, { mode: 'local' }],
    ['outside Lambda, CONTROL_PLANE_MODE=deployed forces deployed', { TABLE_NAME: 't', CONTROL_PLANE_MODE: 'deployed' }, { mode: 'deployed' }],
    ['a local process may name its function', { TABLE_NAME: 't', POWERTOOLS_SERVICE_NAME: 'drift-check' }, { mode: 'local', functionName: 'drift-check' }],
  ])('mode: %s', (_case, env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });

  it.each([
    [{ ...LAMBDA, CONTROL_PLANE_MODE: 'local' }, 'CONTROL_PLANE_MODE=local is refused in Lambda (ome-pinning-prod-pin); remove it: a deployed function always runs in deployed mode'],
    [{ TABLE_NAME: 't', CONTROL_PLANE_MODE: 'prod' }, 'CONTROL_PLANE_MODE="prod" must be local or deployed'],
    [{ ...LAMBDA, POWERTOOLS_SERVICE_NAME: '' }, "POWERTOOLS_SERVICE_NAME is not set; set it to the function's name (forward-watch-events, pin, drift-check, repin-apply, rollout-run, revision-gc, resync, admission-webhook): it picks the function's cluster secrets"],
    [{ ...LAMBDA, POWERTOOLS_SERVICE_NAME: 'pinner' }, 'POWERTOOLS_SERVICE_NAME="pinner" is not one of forward-watch-events, pin, drift-check, repin-apply, rollout-run, revision-gc, resync, admission-webhook'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new InvalidInputError(message));
  });
});

describe('Go durations in the environment', () => {
  it.each([
    ['RUNTIME_REVISION_GRACE_PERIOD', '1h30m', 'revisionGracePeriodMs', 5_400_000],
    ['RUNTIME_REVISION_GRACE_PERIOD', '1.5h', 'revisionGracePeriodMs', 5_400_000],
    ['RUNTIME_REVISION_GRACE_PERIOD', '0', 'revisionGracePeriodMs', 0],
    ['LEASE_TTL', '90s', 'leaseTtlMs', 90_000],
    ['LEASE_TTL', '2m30.5s', 'leaseTtlMs', 150_500],
    ['FORWARDER_MAX_RUNTIME', '14m', 'forwarderMaxRuntimeMs', 840_000],
  ])('%s=%s', (name, value, field, ms) => {
    expect(loadConfig({ TABLE_NAME: 't', [name]: value })).toMatchObject({ [field]: ms });
  });

  it.each([
    ['LEASE_TTL', '30', 'LEASE_TTL="30" is not a duration (time: missing unit in duration "30"); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    ['RUNTIME_REVISION_GRACE_PERIOD', '1d', 'RUNTIME_REVISION_GRACE_PERIOD="1d" is not a duration (time: unknown unit "d" in duration "1d"); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    ['RUNTIME_REVISION_GRACE_PERIOD', '-1h', 'RUNTIME_REVISION_GRACE_PERIOD="-1h" is negative; use a duration such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    ['FORWARDER_MAX_RUNTIME', '.', 'FORWARDER_MAX_RUNTIME="." is not a duration (time: invalid duration "."); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
  ])('refuses %s=%s, naming the setting', (name, value, message) => {
    expect(() => loadConfig({ TABLE_NAME: 't', [name]: value })).toThrow(new InvalidInputError(message));
  });
});
