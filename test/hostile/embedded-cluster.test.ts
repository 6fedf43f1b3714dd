/**
 * Hostile requests to the embedded API server, through HTTP as kubectl and clients send
 * them: object names `.` and `..`, JSON Patch paths through `__proto__`, bodies in media
 * types the server does not decode. Each gets the Status a real kube-apiserver answers,
 * and changes nothing.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createClusterClient } from '../../shared/adapters/kubernetes';
import { connectionFromKubeconfigText } from '../../shared/adapters/kubernetes/record-connection';
import { InvalidInputError } from '../../shared/domain/errors';
import type { KubeObject, ResourceType } from '../../shared/ports/cluster';
import { KubectlHarness } from '../cluster/support';

const NS = 'hostile';
const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const NAMESPACES: ResourceType = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
const ISVC: ResourceType = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', kind: 'InferenceService', namespaced: true };

let cluster: EmbeddedCluster;
let kubectl: KubectlHarness;

interface RawResponse {
  code: number;
  body: { kind?: string; reason?: string; message?: string; code?: number; details?: unknown };
}

/** One request with its path exactly as given: no URL normalisation on the way. */
function raw(method: string, path: string, options: { contentType?: string; body?: string } = {}): Promise<RawResponse> {
  const server = new URL(cluster.url);
  const config = parseYaml(cluster.kubeconfig) as { users?: Array<{ user?: { token?: string } }> };
  const token = config.users?.[0]?.user?.token;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (options.contentType !== undefined) headers['Content-Type'] = options.contentType;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: server.hostname, port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(text) as RawResponse['body'] }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function snapshot(): Promise<string[]> {
  const namespace = await cluster.client.get(NAMESPACES, undefined, NS);
  const maps = await cluster.client.list(CONFIGMAPS, { namespace: NS });
  return [namespace.metadata.resourceVersion ?? '', ...maps.items.map((m) => `${m.metadata.name}@${m.metadata.resourceVersion ?? ''}`)];
}

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
  kubectl = new KubectlHarness(cluster);
  await cluster.client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await cluster.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: NS }, data: { a: '1' } });
});

afterAll(async () => {
  await cluster?.stop();
  kubectl?.cleanup();
});

describe('object names . and ..', () => {
  it.each([
    ['DELETE', `/api/v1/namespaces/${NS}/configmaps/..`, 'Name parameter invalid: "..": may not be \'..\''],
    ['DELETE', `/api/v1/namespaces/${NS}/configmaps/%2E%2E`, 'Name parameter invalid: "..": may not be \'..\''],
    ['DELETE', `/api/v1/namespaces/${NS}/configmaps/.`, 'Name parameter invalid: ".": may not be \'.\''],
    ['GET', `/api/v1/namespaces/${NS}/configmaps/%2e%2e`, 'Name parameter invalid: "..": may not be \'..\''],
    ['DELETE', `/apis/ome.io/v1beta1/namespaces/${NS}/inferenceservices/..`, 'Name parameter invalid: "..": may not be \'..\''],
    ['GET', `/api/v1/namespaces/${NS}/configmaps/a%2Fb`, 'Name parameter invalid: "a/b": may not contain \'/\''],
  ])('%s %s is 400 BadRequest and reaches nothing else', async (method, path, message) => {
    const before = await snapshot();
    const response = await raw(method, path);
    expect(response).toEqual({ code: 400, body: expect.objectContaining({ kind: 'Status', reason: 'BadRequest', code: 400, message }) });
    expect(await snapshot()).toEqual(before);
  });

  it('kubectl refuses to create an object named ..', async () => {
    const file = kubectl.file('dots.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ".."\n  namespace: ${NS}\n`);
    const before = await snapshot();
    const result = await kubectl.run('create', '-f', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('metadata.name: Invalid value: ".."');
    expect(await snapshot()).toEqual(before);
  });

  it.each([['delete'], ['get']])('kubectl %s configmap .. never reaches the namespace', async (verb) => {
    const before = await snapshot();
    const result = await kubectl.run(verb, 'configmap', '..', '-n', NS);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/may not be '\.\.'/);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['name', NS, '..', 'ConfigMap name "..": may not be \'..\''],
    ['name', NS, '.', 'ConfigMap name ".": may not be \'.\''],
    ['namespace', '..', 'keep', 'ConfigMap namespace "..": may not be \'..\''],
  ])('the functions\' client refuses a %s of %j/%j before sending anything', async (_what, namespace, name, message) => {
    const client = createClusterClient(connectionFromKubeconfigText('local', cluster.kubeconfig));
    const before = await snapshot();
    for (const call of [() => client.get(CONFIGMAPS, namespace, name), () => client.delete(CONFIGMAPS, namespace, name), () => client.patch(CONFIGMAPS, namespace, name, {}, { type: 'merge' })]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toBe(message);
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('JSON Patch through __proto__', () => {
  it.each([
    [[{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]],
    [[{ op: 'add', path: '/metadata/__proto__/polluted', value: 'yes' }]],
    [[{ op: 'replace', path: '/data/__proto__', value: { polluted: 'yes' } }]],
    [[{ op: 'add', path: '/constructor/prototype/polluted', value: 'yes' }]],
  ])('%j is 422, pollutes nothing and changes nothing', async (patch) => {
    const before = await snapshot();
    const response = await raw('PATCH', `/api/v1/namespaces/${NS}/configmaps/keep`, { contentType: 'application/json-patch+json', body: JSON.stringify(patch) });
    expect(response.code).toBe(422);
    expect(response.body).toMatchObject({ kind: 'Status', code: 422 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await snapshot()).toEqual(before);
  });

  it('a merge patch key __proto__ stays a plain key that validation then refuses, and the prototype is untouched', async () => {
    const before = await snapshot();
    const response = await raw('PATCH', `/api/v1/namespaces/${NS}/configmaps/keep`, {
      contentType: 'application/merge-patch+json',
      body: '{"metadata":{"annotations":{"__proto__":{"polluted":"yes"}}}}',
    });
    expect(response.code).toBeGreaterThanOrEqual(400);
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await snapshot()).toEqual(before);
  });
});

describe('bodies in unknown media types', () => {
  const configMap = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed', namespace: NS }, data: { a: '1' } });
  const isvc = JSON.stringify({ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'typed', namespace: NS }, spec: {} });

  it.each([
    ['POST', `/api/v1/namespaces/${NS}/configmaps`, 'text/plain', configMap, 'application/json, application/yaml, application/vnd.kubernetes.protobuf'],
    ['PUT', `/api/v1/namespaces/${NS}/configmaps/keep`, 'application/x-www-form-urlencoded', configMap, 'application/json, application/yaml, application/vnd.kubernetes.protobuf'],
    ['POST', `/apis/ome.io/v1beta1/namespaces/${NS}/inferenceservices`, 'text/plain', isvc, 'application/json, application/yaml'],
    ['POST', `/apis/ome.io/v1beta1/namespaces/${NS}/inferenceservices`, 'application/vnd.kubernetes.protobuf', isvc, 'application/json, application/yaml'],
  ])('%s %s as %s is 415 UnsupportedMediaType', async (method, path, contentType, body, accepted) => {
    const before = await snapshot();
    const response = await raw(method, path, { contentType, body });
    expect(response).toEqual({
      code: 415,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
        reason: 'UnsupportedMediaType',
        code: 415,
      },
    });
    expect(await snapshot()).toEqual(before);
    await expect(cluster.client.get(ISVC, NS, 'typed')).rejects.toThrow();
  });

  it('JSON without a Content-Type is still JSON, as on a real server', async () => {
    const response = await raw('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: configMap.replace('"typed"', '"untyped"') });
    expect(response.code).toBe(201);
    expect((await cluster.client.get<KubeObject & { data?: Record<string, string> }>(CONFIGMAPS, NS, 'untyped')).data).toEqual({ a: '1' });
  });
});
