import { AccessDeniedException as EksAccessDenied, DescribeClusterCommand, EKSClient, ResourceNotFoundException as EksNotFound, ServerException, ThrottlingException } from '@aws-sdk/client-eks';
import {
  DecryptionFailure,
  GetSecretValueCommand,
  InternalServiceError,
  ResourceNotFoundException as SecretNotFound,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createAwsCredentialResolver, EKS_TOKEN_PREFIX } from '../../../shared/adapters/aws-credentials';
import { ControlPlaneError, InvalidInputError, NotFoundError, ThrottledError, UnavailableError } from '../../../shared/domain/errors';
import type { ClusterRecord } from '../../../shared/ports/store';

expect.extend(allCustomMatcher);

const secretsMock = mockClient(SecretsManagerClient);
const eksMock = mockClient(EKSClient);

const PREFIX = 'ome-pinning/prod/clusters/';
/** What function `pin` reads for cluster `blue`. */
const PIN_SECRET = `${PREFIX}blue/pin`;
const T0 = Date.parse('2026-03-01T10:00:00Z');
const MINUTE = 60_000;
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

const base = { mode: 'standalone' as const, server: 'https://registered.example:443', omeNamespace: 'ome' };
const secretRecord = (id = 'blue'): ClusterRecord => ({ ...base, id, credentials: { kind: 'secret' } });
const eksRecord: ClusterRecord = { ...base, id: 'green', credentials: { kind: 'eks', clusterName: 'green-eks', region: 'eu-west-1' } };

const metadata = { $metadata: {} };

/** A token secret's text, with the server every token secret names. */
const tokenSecret = (token: string): string => JSON.stringify({ token, server: 'https://blue.example:6443' });

/** A service error as the SDK raises it when the service's model does not name it. */
function sdkError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name, $fault: 'client', $metadata: { httpStatusCode: 400 } });
}

function newResolver() {
  const clock = { time: T0, now: () => clock.time };
  const resolver = createAwsCredentialResolver({
    secrets: new SecretsManagerClient({ region: 'eu-west-1' }),
    eks: new EKSClient({ region: 'eu-west-1' }),
    credentials: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'session' }),
    clock,
    secretPrefix: PREFIX,
  });
  const resolve = (record: ClusterRecord, functionName: string | undefined = 'pin') => resolver.resolve(record, functionName);
  return { clock, resolve, resolver };
}

function describedCluster(endpoint = 'https://ABC.gr7.eu-west-1.eks.amazonaws.com') {
  return { cluster: { name: 'green-eks', status: 'ACTIVE' as const, endpoint, certificateAuthority: { data: CA } } };
}

beforeEach(() => {
  secretsMock.reset();
  eksMock.reset();
});

describe('Function: createAwsCredentialResolver', () => {
  describe('kubeconfig records', () => {
    it('need nothing resolved and call no AWS service', async () => {
      // Prepare
      const { resolve } = newResolver();

      // Act
      const resolved = await resolve({ ...base, id: 'local', credentials: { kind: 'kubeconfig', kubeconfig: 'apiVersion: v1' } });

      // Assess
      expect(resolved).toEqual({});
      expect(secretsMock).not.toHaveReceivedAnyCommand();
      expect(eksMock).not.toHaveReceivedAnyCommand();
    });
  });

  describe('secret records', () => {
    it('read a token secret with its server and CA, valid for five minutes', async () => {
      // Prepare
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ token: 'sa-token', server: 'https://blue.example:6443', caData: CA }) });
      const { resolve } = newResolver();

      // Act
      const resolved = await resolve(secretRecord());

      // Assess
      expect(secretsMock).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: PIN_SECRET });
      expect(resolved).toEqual({ token: 'sa-token', server: 'https://blue.example:6443', caData: CA, expiresAt: T0 + 5 * MINUTE });
    });

    it('read each function its own secret, <prefix><cluster>/<function>, and never share one', async () => {
      // Prepare
      secretsMock.on(GetSecretValueCommand, { SecretId: PIN_SECRET }).resolves({ SecretString: tokenSecret('pin-token') });
      secretsMock.on(GetSecretValueCommand, { SecretId: `${PREFIX}blue/drift-check` }).resolves({ SecretString: tokenSecret('drift-token') });
      const { resolve } = newResolver();

      // Act
      const pin = await resolve(secretRecord(), 'pin');
      const drift = await resolve(secretRecord(), 'drift-check');
      const pinAgain = await resolve(secretRecord(), 'pin');

      // Assess
      expect([pin.token, drift.token, pinAgain.token]).toEqual(['pin-token', 'drift-token', 'pin-token']);
      expect(secretsMock.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId)).toEqual([PIN_SECRET, `${PREFIX}blue/drift-check`]);
    });

    it('read a kubeconfig secret (YAML)', async () => {
      // Prepare
      const kubeconfig = stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'blue', cluster: { server: 'https://blue.example' } }],
        users: [{ name: 'blue', user: { token: 't' } }],
        contexts: [{ name: 'blue', context: { cluster: 'blue', user: 'blue' } }],
        'current-context': 'blue',
      });
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: kubeconfig });
      const { resolve } = newResolver();

      // Act
      const resolved = await resolve(secretRecord());

      // Assess
      expect(secretsMock).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: PIN_SECRET });
      expect(resolved).toEqual({ kubeconfig, expiresAt: T0 + 5 * MINUTE });
    });

    it('reuse the secret until it expires, then read it again and pick up a rotation', async () => {
      // Prepare
      secretsMock
        .on(GetSecretValueCommand)
        .resolvesOnce({ SecretString: tokenSecret('before') })
        .resolvesOnce({ SecretString: tokenSecret('after') });
      const { clock, resolve } = newResolver();

      // Act
      const first = await resolve(secretRecord());
      clock.time = T0 + 5 * MINUTE - 1;
      const cached = await resolve(secretRecord());
      clock.time = T0 + 5 * MINUTE;
      const rotated = await resolve(secretRecord());

      // Assess
      expect([first.token, cached.token, rotated.token]).toEqual(['before', 'before', 'after']);
      expect(rotated.expiresAt).toBe(T0 + 10 * MINUTE);
      expect(secretsMock).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
    });

    it('share one GetSecretValue among concurrent resolutions of a cluster', async () => {
      // Prepare
      const answers: Array<(value: { SecretString: string }) => void> = [];
      secretsMock.on(GetSecretValueCommand).callsFake(() => new Promise((resolve) => answers.push(resolve)));
      const { resolve } = newResolver();

      // Act
      const pending = Array.from({ length: 10 }, () => resolve(secretRecord()));
      await new Promise((settle) => setTimeout(settle, 20));
      for (const answer of answers) answer({ SecretString: tokenSecret('shared') });
      const resolved = await Promise.all(pending);

      // Assess
      expect(secretsMock).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
      expect(new Set(resolved.map((credentials) => credentials.token))).toEqual(new Set(['shared']));
    });

    it('forget a failed read so the next delivery tries again', async () => {
      // Prepare
      secretsMock
        .on(GetSecretValueCommand)
        .rejectsOnce(new InternalServiceError({ message: 'try later', ...metadata }))
        .resolvesOnce({ SecretString: tokenSecret('ok') });
      const { resolve } = newResolver();

      // Act
      const failed = await resolve(secretRecord()).catch((error: unknown) => error);
      const resolved = await resolve(secretRecord());

      // Assess
      expect(failed).toBeInstanceOf(UnavailableError);
      expect(resolved.token).toBe('ok');
    });

    it.each<[string, ClusterRecord, string | undefined, string]>([
      [
        'a record that still names one secret for every function (secretArn)',
        { ...base, id: 'blue', credentials: { kind: 'secret', secretArn: `arn:aws:secretsmanager:eu-west-1:111122223333:secret:${PREFIX}blue-AbCdEf` } },
        'pin',
        `store a copy of the credentials for each function F as ${PREFIX}blue/F and register the cluster again as {"kind": "secret"}`,
      ],
      ['a process that does not know its function', secretRecord(), undefined, "need the function's name (POWERTOOLS_SERVICE_NAME)"],
      ['a cluster id that would reach into another secret path', secretRecord('blue/pin'), 'drift-check', 'the id cannot be part of a secret name'],
    ])('refuse %s without reading any secret', async (_case, record, functionName, message) => {
      // Prepare
      const { resolver } = newResolver();

      // Act
      const error = await resolver.resolve(record, functionName).catch((caught: unknown) => caught);

      // Assess
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toContain(message);
      expect(secretsMock).not.toHaveReceivedAnyCommand();
    });

    it('refuse every secret when no prefix is configured', async () => {
      // Prepare
      const resolve = createAwsCredentialResolver({
        secrets: new SecretsManagerClient({ region: 'eu-west-1' }),
        eks: new EKSClient({ region: 'eu-west-1' }),
        credentials: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
        secretPrefix: '',
      });

      // Act / Assess
      await expect(resolve.resolve(secretRecord(), 'pin')).rejects.toThrow('CLUSTER_SECRET_PREFIX is not set');
      expect(secretsMock).not.toHaveReceivedAnyCommand();
    });

    it.each([
      ['plain text', 'hunter2-plain-token'],
      ['JSON without a token or clusters', '{"password":"hunter2"}'],
      ['an empty token', '{"token":""}'],
      ['a server that is not a URL', '{"token":"hunter2","server":"blue.example"}'],
      ['a token without a server', '{"token":"hunter2"}'],
      ['text that is neither JSON nor YAML', '{"token": "hunter2"'],
    ])('reject a secret holding %s without quoting it', async (_case, content) => {
      // Prepare
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: content });
      const { resolve } = newResolver();

      // Act
      const error = await resolve(secretRecord()).catch((caught: unknown) => caught);

      // Assess
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).not.toContain('hunter2');
      expect((error as Error).cause).toBeUndefined();
    });

    it("refuse a token secret without a server, saying to put it in the secret, even when the record names one", async () => {
      // Prepare: a secret written before the server had to be in it; the record names one.
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ token: 'sa-token', caData: CA }) });
      const { resolve } = newResolver();

      // Act
      const error = await resolve(secretRecord()).catch((caught: unknown) => caught);

      // Assess: terminal, and it says what to store where.
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).retryable).toBe(false);
      expect((error as Error).message).toBe(
        'cluster blue: the secret holds a token but no "server"; put the API server\'s URL in the secret as "server" and its CA as "caData" (base64 PEM), as docs/operations.md ("Secret records") shows; the registry record\'s server is never used for a token from a secret',
      );
    });

    it.each([
      ['ResourceNotFoundException', new SecretNotFound({ message: 'no such secret', ...metadata }), NotFoundError, 'does not exist'],
      ['ThrottlingException', sdkError('ThrottlingException', 'Rate exceeded'), ThrottledError, 'throttled'],
      ['AccessDeniedException', sdkError('AccessDeniedException', 'not authorized'), ControlPlaneError, `needs secretsmanager:GetSecretValue on arn:aws:secretsmanager:<region>:<account>:secret:${PIN_SECRET}-*`],
      ['DecryptionFailure', new DecryptionFailure({ message: 'KMS denied', ...metadata }), ControlPlaneError, 'needs kms:Decrypt'],
      ['InternalServiceError', new InternalServiceError({ message: 'boom', ...metadata }), UnavailableError, 'unavailable'],
    ])('map %s to a typed error', async (_name, awsError, type, message) => {
      // Prepare
      secretsMock.on(GetSecretValueCommand).rejects(awsError);
      const { resolve } = newResolver();

      // Act
      const error = await resolve(secretRecord()).catch((caught: unknown) => caught);

      // Assess
      expect((error as Error).name).toBe(type.name);
      expect((error as ControlPlaneError).retryable).toBe(type === ThrottledError || type === UnavailableError);
      expect((error as Error).message).toContain(message);
      expect((error as Error).cause).toBe(awsError);
    });
  });

  describe('EKS records', () => {
    it('take endpoint and CA from DescribeCluster and a fresh token valid for 14 minutes', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describedCluster());
      const { resolve } = newResolver();

      // Act
      const resolved = await resolve(eksRecord);

      // Assess
      expect(eksMock).toHaveReceivedCommandWith(DescribeClusterCommand, { name: 'green-eks' });
      expect(resolved).toMatchObject({ server: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com', caData: CA, expiresAt: T0 + 14 * MINUTE });
      const url = new URL(Buffer.from((resolved.token ?? '').slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
      expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
      expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    });

    it('reuse the token until 14 minutes, then sign a new one; the endpoint is described again only after an hour', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describedCluster());
      const { clock, resolve } = newResolver();

      // Act
      const first = await resolve(eksRecord);
      clock.time = T0 + 14 * MINUTE - 1;
      const cached = await resolve(eksRecord);
      clock.time = T0 + 14 * MINUTE;
      const refreshed = await resolve(eksRecord);
      const describesWithinTheHour = eksMock.commandCalls(DescribeClusterCommand).length;
      clock.time = T0 + 70 * MINUTE;
      await resolve(eksRecord);

      // Assess
      expect(cached.token).toBe(first.token);
      expect(refreshed.token).not.toBe(first.token);
      expect(refreshed.expiresAt).toBe(T0 + 28 * MINUTE);
      expect(describesWithinTheHour).toBe(1);
      expect(eksMock).toHaveReceivedCommandTimes(DescribeClusterCommand, 2);
    });

    it('wait for a cluster that has no endpoint yet (retryable)', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves({ cluster: { name: 'green-eks', status: 'CREATING' } });
      const { resolve } = newResolver();

      // Act / Assess
      await expect(resolve(eksRecord)).rejects.toThrow(UnavailableError);
      await expect(resolve(eksRecord)).rejects.toThrow('status CREATING');
    });

    it.each([
      ['ResourceNotFoundException', new EksNotFound({ message: 'No cluster found for name: green-eks.', ...metadata }), NotFoundError, 'does not exist'],
      ['ThrottlingException', new ThrottlingException({ message: 'slow down', ...metadata }), ThrottledError, 'throttled'],
      ['AccessDeniedException', new EksAccessDenied({ message: 'not authorized', ...metadata }), ControlPlaneError, 'needs eks:DescribeCluster on arn:aws:eks:eu-west-1:<account>:cluster/green-eks'],
      ['ServerException', new ServerException({ message: 'boom', ...metadata }), UnavailableError, 'unavailable'],
    ])('map %s to a typed error', async (_name, awsError, type, message) => {
      // Prepare
      eksMock.on(DescribeClusterCommand).rejects(awsError);
      const { resolve } = newResolver();

      // Act
      const error = await resolve(eksRecord).catch((caught: unknown) => caught);

      // Assess
      expect((error as Error).name).toBe(type.name);
      expect((error as ControlPlaneError).retryable).toBe(type === ThrottledError || type === UnavailableError);
      expect((error as Error).message).toContain(message);
    });
  });

  describe('Method: forget (the API server answered 401)', () => {
    it('drops a refused secret so the next resolution reads it again, but keeps a newer one', async () => {
      // Prepare
      secretsMock
        .on(GetSecretValueCommand)
        .resolvesOnce({ SecretString: tokenSecret('revoked') })
        .resolvesOnce({ SecretString: tokenSecret('rotated') });
      const { resolve, resolver } = newResolver();
      const refused = await resolve(secretRecord());

      // Act
      resolver.forget(secretRecord(), 'pin', refused);
      const reread = await resolve(secretRecord());
      // A late 401 for the old credential (a request sent before the re-read) changes nothing.
      resolver.forget(secretRecord(), 'pin', refused);
      const kept = await resolve(secretRecord());

      // Assess
      expect([refused.token, reread.token, kept.token]).toEqual(['revoked', 'rotated', 'rotated']);
      expect(secretsMock).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
    });

    it("drops only the refusing function's secret", async () => {
      // Prepare
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: tokenSecret('t') });
      const { resolve, resolver } = newResolver();
      const pin = await resolve(secretRecord(), 'pin');
      await resolve(secretRecord(), 'drift-check');

      // Act
      resolver.forget(secretRecord(), 'pin', pin);
      await resolve(secretRecord(), 'pin');
      await resolve(secretRecord(), 'drift-check');

      // Assess
      expect(secretsMock.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId)).toEqual([PIN_SECRET, `${PREFIX}blue/drift-check`, PIN_SECRET]);
    });

    it('signs a new EKS token without describing the cluster again', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describedCluster());
      const { clock, resolve, resolver } = newResolver();
      const refused = await resolve(eksRecord);
      clock.time = T0 + 1_000;
      const unchanged = await resolve(eksRecord);

      // Act
      resolver.forget(eksRecord, 'pin', refused);
      const fresh = await resolve(eksRecord);

      // Assess
      expect(unchanged.token).toBe(refused.token);
      expect(fresh.token).not.toBe(refused.token);
      expect(fresh.expiresAt).toBe(T0 + 1_000 + 14 * MINUTE);
      expect(eksMock).toHaveReceivedCommandTimes(DescribeClusterCommand, 1);
    });
  });
});
