import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  ConflictError,
  ControlPlaneError,
  ExpiredError,
  InvalidInputError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
} from '../../../shared/domain/errors';
import { apiFailureOf, createClusterClient, type ClosableClusterClient } from '../../../shared/adapters/kubernetes';
import { Resources } from '../../../shared/domain/model';
import type { InferenceService } from '../../../shared/domain/model';
import { connectionFor, reply, startCannedServer, status, type CannedServer } from './canned-server';

const isvc: InferenceService = {
  apiVersion: 'ome.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'chat', namespace: 'prod', resourceVersion: '7' },
  spec: { runtime: { name: 'sglang' } },
};

type Call = (client: ClosableClusterClient) => Promise<unknown>;
const calls: Record<string, Call> = {
  get: (client) => client.get(Resources.inferenceServices, 'prod', 'chat'),
  list: (client) => client.list(Resources.inferenceServices, { namespace: 'prod' }),
  create: (client) => client.create(Resources.inferenceServices, isvc),
  replace: (client) => client.replace(Resources.inferenceServices, isvc),
  replaceStatus: (client) => client.replaceStatus(Resources.inferenceServices, isvc),
  patch: (client) => client.patch(Resources.inferenceServices, 'prod', 'chat', [{ op: 'test', path: '/metadata/uid', value: 'x' }], { type: 'json' }),
  delete: (client) => client.delete(Resources.inferenceServices, 'prod', 'chat'),
  watch: (client) => client.watch(Resources.inferenceServices, { namespace: 'prod' }, () => undefined),
};

describe('Kubernetes adapter: error mapping', () => {
  let server: CannedServer;
  let client: ClosableClusterClient;

  beforeAll(async () => {
    server = await startCannedServer();
    // 429s map straight to ThrottledError here; their retries are in throttling.test.ts.
    client = createClusterClient(server.connection, { requestTimeoutMs: 300, maxThrottledRetries: 0 });
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it.each([
    ['get', 404, 'NotFound', 'inferenceservices.ome.io "chat" not found', NotFoundError, false],
    ['create', 409, 'AlreadyExists', 'inferenceservices.ome.io "chat" already exists', AlreadyExistsError, false],
    ['replace', 409, 'Conflict', 'Operation cannot be fulfilled on inferenceservices.ome.io "chat": the object has been modified; please apply your changes to the latest version and try again', ConflictError, true],
    ['delete', 409, 'Conflict', 'Precondition failed: UID in precondition: 1, UID in object meta: 2', ConflictError, true],
    ['list', 410, 'Expired', 'The provided continue parameter is too old', ExpiredError, true],
    ['replaceStatus', 429, 'TooManyRequests', 'Too many requests, please try again later.', ThrottledError, true],
    ['get', 500, 'InternalError', 'Internal error occurred: etcd timeout', UnavailableError, true],
    ['get', 503, 'ServiceUnavailable', 'the server is currently unable to handle the request', UnavailableError, true],
    ['get', 504, 'Timeout', 'the server was unable to return a response in the time allotted', UnavailableError, true],
    ['patch', 422, 'Invalid', 'the server rejected our request due to an error in our request', InvalidInputError, false],
    ['patch', 400, 'BadRequest', 'the server rejected our request due to an error in our request', InvalidInputError, false],
    ['create', 403, 'Forbidden', 'admission webhook "inferenceservice.ome-webhook-server.validator" denied the request: spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin', InvalidInputError, false],
    ['get', 403, 'Forbidden', 'inferenceservices.ome.io "chat" is forbidden: User "x" cannot get resource "inferenceservices"', ControlPlaneError, false],
    ['watch', 410, 'Expired', 'too old resource version: 1 (20)', ExpiredError, true],
  ] as const)('%s answered %i %s', async (call, code, reason, message, errorType, retryable) => {
    // Prepare
    server.route = (_request, response) => reply(response, code, status(code, reason, message));
    // Act
    const error = await calls[call]!(client).catch((caught: unknown) => caught);
    // Assess
    expect(error).toBeInstanceOf(errorType);
    expect(error).toMatchObject({ message, retryable });
    expect(apiFailureOf(error)).toMatchObject({ code, reason });
  });

  it('maps a 403 that is not an admission denial to a terminal error of no narrower type', async () => {
    server.route = (_request, response) => reply(response, 403, status(403, 'Forbidden', 'forbidden'));
    const error = await calls.get!(client).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ retryable: false });
  });

  it('maps a failure body that is not a Status (a proxy page) by its code', async () => {
    server.route = (_request, response) => reply(response, 502, '<html>Bad Gateway</html>');
    const error = await calls.get!(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain('502 Bad Gateway');
  });

  it('maps an ERROR event in a watch stream to the error its Status names', async () => {
    server.route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.write(`${JSON.stringify({ type: 'ADDED', object: isvc })}\n`);
      response.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version: 5 (9)') })}\n`);
    };
    const seen: string[] = [];
    const error = await client
      .watch(Resources.inferenceServices, { namespace: 'prod', resourceVersion: '5' }, (event) => {
        seen.push(event.type);
      })
      .catch((caught: unknown) => caught);
    expect(seen).toEqual(['ADDED']);
    expect(error).toBeInstanceOf(ExpiredError);
  });

  it('maps a request that gets no answer in time to UnavailableError', async () => {
    server.route = () => undefined; // never answers
    const error = await calls.get!(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain('no answer within 300 ms');
  });

  it('maps a refused connection to UnavailableError', async () => {
    const closed = await startCannedServer();
    await closed.stop();
    const refused = createClusterClient(connectionFor(closed.url));
    const error = await refused.get(Resources.inferenceServices, 'prod', 'chat').catch((caught: unknown) => caught);
    refused.close();
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });
});
