/**
 * The HTTP face of the API server: REST paths (`/api/v1/...`, `/apis/<g>/<v>/...`),
 * discovery and OpenAPI, content negotiation (JSON, YAML bodies, `as=Table`,
 * `as=PartialObjectMetadata`), `Warning` headers, errors as `Status` JSON and watch
 * streams of newline-delimited `{type, object}` whose headers are flushed at once.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { runAsUser, type AccessControl } from './access';
import { CUSTOM_RESOURCE_PATCH_TYPES, PATCH_CONTENT_TYPES, type ClusterApi, type DeleteParams, type WriteOptions } from './api';
import { ApiError, badRequest, internalError, methodNotAllowed, pathNotFound, unsupportedMediaType, type Status } from './api-errors';
import { apiGroup, coreVersions, groupList, openApiGroupVersion, openApiRoot, resourceList, SERVER_VERSION } from './discovery';
import type { KubeObject, ResourceDef } from './registry';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf';
import { buildTable, type IncludeObject } from './tables';
import { asServed, validateListOptions } from './watch';

const MAX_BODY_BYTES = 3 * 1024 * 1024;

interface ResourceRoute {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  subresource: string;
}

type Rendering =
  | { as: 'object' }
  | { as: 'table'; apiVersion: string; include: IncludeObject }
  | { as: 'metadata'; apiVersion: string };

function negotiate(accept: string | undefined, query: URLSearchParams): Rendering {
  const header = accept ?? '';
  for (const part of header.split(',')) {
    const params = new Map(
      part
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string]),
    );
    const as = params.get('as');
    const g = params.get('g');
    const v = params.get('v') ?? 'v1';
    if (as === 'Table' && (g === 'meta.k8s.io' || g === undefined)) {
      const include = (query.get('includeObject') ?? 'Metadata') as IncludeObject;
      return { as: 'table', apiVersion: `meta.k8s.io/${v}`, include: ['None', 'Metadata', 'Object'].includes(include) ? include : 'Metadata' };
    }
    if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && g === 'meta.k8s.io') {
      return { as: 'metadata', apiVersion: `meta.k8s.io/${v}` };
    }
  }
  return { as: 'object' };
}

function send(res: http.ServerResponse, code: number, body: unknown, warnings: string[] = [], extraHeaders: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  const headers: http.OutgoingHttpHeaders = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...extraHeaders,
  };
  if (warnings.length > 0) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(text);
}

function sendError(res: http.ServerResponse, error: unknown): void {
  const status: Status = error instanceof ApiError ? error.status : internalError(error instanceof Error ? error.message : String(error)).status;
  if (res.headersSent) {
    res.end();
    return;
  }
  // As kube-apiserver: a 429 names its wait in the header too, which clients honour first.
  const retryAfter = (status.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  send(res, status.code, status, [], status.code === 429 && retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {});
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError({ message: 'Request entity too large: limit is 3145728', reason: 'RequestEntityTooLarge', code: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function mediaType(req: http.IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * The media type of a create or update body, as kube-apiserver negotiates it: none means
 * JSON; anything its serializers do not decode is 415 UnsupportedMediaType (custom
 * resources have no protobuf).
 */
function writeMediaType(req: http.IncomingMessage, def: ResourceDef): string {
  const type = mediaType(req) || 'application/json';
  const accepted = def.crdName === undefined ? ['application/json', 'application/yaml', PROTOBUF_CONTENT_TYPE] : ['application/json', 'application/yaml'];
  if (!accepted.includes(type)) throw unsupportedMediaType(accepted);
  return type;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`invalid path segment ${JSON.stringify(segment)}: malformed percent-encoding`);
  }
}

function decodeBody(body: Buffer, type: string): unknown {
  if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobufObject(body);
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the body of the request was empty');
  try {
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml') return parseYaml(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw badRequest(`error decoding patch or body: ${detail}`);
  }
}

function writeOptions(query: URLSearchParams): WriteOptions {
  const options: WriteOptions = {};
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) {
    if (dryRun.some((d) => d !== 'All')) throw badRequest(`Invalid dry run value: ${dryRun.join(',')}`);
    options.dryRun = true;
  }
  const manager = query.get('fieldManager');
  if (manager) options.fieldManager = manager;
  const validation = query.get('fieldValidation');
  if (validation === 'Strict' || validation === 'Warn' || validation === 'Ignore') options.fieldValidation = validation;
  else if (validation) throw badRequest(`fieldValidation: Unsupported value: "${validation}": supported values: "Ignore", "Strict", "Warn"`);
  else options.fieldValidation = 'Warn';
  return options;
}

function partialMetadata(apiVersion: string, object: KubeObject): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: object.metadata };
}

/** Requests an embedded API server received: watches apart, the rest by HTTP method. */
export interface RequestCounts {
  requests: number;
  watches: number;
  byMethod: Record<string, number>;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

export class ApiHttpServer {
  private readonly server: http.Server;
  private readonly tlsServer: https.Server;
  /** Accepts connections and hands each to the plain or the TLS server by its first byte. */
  private readonly listener: net.Server;
  /** Connections that have not sent their first byte yet, so neither server owns them. */
  private readonly undecided = new Set<net.Socket>();
  private address = '';
  private readonly counts: RequestCounts = { requests: 0, watches: 0, byMethod: {} };

  constructor(
    private readonly api: ClusterApi,
    private readonly access: AccessControl,
    tls: { cert: Buffer; key: Buffer },
    /** Held before each request is served, as a network hop and a remote API server would take. */
    private readonly latencyMs = 0,
  ) {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.count(req);
      const served = this.latencyMs > 0 ? delay(this.latencyMs).then(() => this.handle(req, res)) : this.handle(req, res);
      served.catch((error: unknown) => sendError(res, error));
    };
    this.server = http.createServer(handler);
    this.tlsServer = https.createServer({ cert: tls.cert, key: tls.key }, handler);
    this.server.keepAliveTimeout = 30_000;
    this.tlsServer.keepAliveTimeout = 30_000;
    this.listener = net.createServer((socket) => {
      this.undecided.add(socket);
      socket.once('close', () => this.undecided.delete(socket));
      socket.once('data', (first: Buffer) => {
        this.undecided.delete(socket);
        socket.pause();
        socket.unshift(first);
        (first[0] === TLS_HANDSHAKE ? this.tlsServer : this.server).emit('connection', socket);
        process.nextTick(() => socket.resume());
      });
      socket.on('error', () => socket.destroy());
    });
  }

  /** Requests received over HTTP and HTTPS since start (watches apart), for cost figures. */
  requestCounts(): RequestCounts {
    return { ...this.counts, byMethod: { ...this.counts.byMethod } };
  }

  private count(req: http.IncomingMessage): void {
    if (/[?&]watch=(true|1)(&|$)/.test(req.url ?? '')) {
      this.counts.watches += 1;
      return;
    }
    const method = req.method ?? 'GET';
    this.counts.requests += 1;
    this.counts.byMethod[method] = (this.counts.byMethod[method] ?? 0) + 1;
  }

  /** Listens; resolves with the plain `http://` URL (the same port serves `https://`). */
  async listen(port: number, host: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen(port, host, () => resolve());
    });
    const info = this.listener.address() as AddressInfo;
    this.address = `${host}:${info.port}`;
    return `http://${this.address}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.listener.close(() => resolve());
      for (const socket of this.undecided) socket.destroy();
      this.server.closeAllConnections();
      this.tlsServer.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // The path as sent: URL parsing would resolve `.`/`..` segments (also as `%2e%2e`), so
    // `DELETE …/configmaps/..` would reach the namespace. kube-apiserver does not resolve them.
    const raw = req.url?.startsWith('/') ? (req.url.split('?')[0] ?? '/') : url.pathname;
    const path = raw.replace(/\/+$/, '') || '/';
    // Authentication and authorization come first, as in kube-apiserver's filter chain.
    const admitted = await this.access.admit(req, path, url.searchParams);
    if ('answer' in admitted) {
      send(res, admitted.answer.code, admitted.answer.body);
      return;
    }
    await runAsUser(admitted.user, async () => {
      if (this.serveNonResource(path, req, res)) return;
      const route = this.route(path);
      await this.serveResource(route, req, res, url.searchParams);
    });
  }

  private serveNonResource(path: string, req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const registry = this.api.registry;
    if (req.method !== 'GET' && req.method !== 'HEAD' && !path.startsWith('/api')) {
      sendError(res, methodNotAllowed());
      return true;
    }
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return true;
    }
    let body: unknown;
    if (path === '/version') body = SERVER_VERSION;
    else if (path === '/api') body = coreVersions(this.address);
    else if (path === '/apis') body = groupList(registry);
    else if (path === '/openapi/v3') body = openApiRoot(registry);
    else if (path === '/api/v1') body = resourceList(registry, '', 'v1');
    else body = this.groupDocument(path);
    if (body === undefined) return false;
    if (body === null) {
      sendError(res, pathNotFound());
      return true;
    }
    send(res, 200, body);
    return true;
  }

  /** `/apis/<g>`, `/apis/<g>/<v>`, `/openapi/v3/...`; null for a known prefix that serves nothing. */
  private groupDocument(path: string): unknown {
    const registry = this.api.registry;
    const parts = path.split('/').filter(Boolean);
    if (parts[0] === 'openapi') {
      if (parts[1] !== 'v3') return null;
      const [group, version] = parts[2] === 'api' ? ['', parts[3] ?? ''] : [parts[3] ?? '', parts[4] ?? ''];
      return openApiGroupVersion(registry, group, version) ?? null;
    }
    if (parts[0] === 'apis' && parts.length === 2) return apiGroup(registry, parts[1] ?? '') ?? null;
    if (parts[0] === 'apis' && parts.length === 3) return resourceList(registry, parts[1] ?? '', parts[2] ?? '') ?? null;
    if (parts[0] !== 'api' && parts[0] !== 'apis') return null;
    return undefined;
  }

  private route(path: string): ResourceRoute {
    const parts = path.split('/').filter(Boolean).map(decodeSegment);
    let group = '';
    let version = '';
    let rest: string[];
    if (parts[0] === 'api') {
      version = parts[1] ?? '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis') {
      group = parts[1] ?? '';
      version = parts[2] ?? '';
      rest = parts.slice(3);
    } else {
      throw pathNotFound();
    }
    if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
      const def = this.api.resolve(group, version, rest[2] ?? '');
      if (!def.namespaced) throw pathNotFound();
      return this.withItem({ def, namespace: rest[1] ?? '', subresource: '' }, rest.slice(3));
    }
    const def = this.api.resolve(group, version, rest[0] ?? '');
    return this.withItem({ def, subresource: '' }, rest.slice(1));
  }

  private withItem(route: ResourceRoute, rest: string[]): ResourceRoute {
    if (rest.length > 2) throw pathNotFound();
    const [name, subresource] = rest;
    if (name !== undefined) route.name = name;
    if (subresource !== undefined) {
      if (subresource !== 'status' || !route.def.statusSubresource) throw pathNotFound();
      route.subresource = subresource;
    }
    return route;
  }

  private async serveResource(route: ResourceRoute, req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams): Promise<void> {
    const method = req.method ?? 'GET';
    const rendering = negotiate(req.headers.accept, query);
    if (route.name === undefined) {
      if (method === 'GET') await this.serveCollectionRead(route, res, query, rendering);
      else if (method === 'POST') await this.serveCreate(route, req, res, query, rendering);
      else if (method === 'DELETE') await this.serveDeleteCollection(route, req, res, query);
      else throw methodNotAllowed();
      return;
    }
    const name = route.name;
    switch (method) {
      case 'GET': {
        const object = await this.api.get(route.def, route.namespace, name, route.subresource);
        this.sendObject(res, 200, route.def, object, rendering);
        return;
      }
      case 'PUT': {
        const body = decodeBody(await readBody(req), writeMediaType(req, route.def));
        const result = await this.api.update(route.def, route.namespace, name, body, route.subresource, writeOptions(query));
        this.sendObject(res, result.code, route.def, result.object, rendering, result.warnings);
        return;
      }
      case 'PATCH':
        await this.servePatch(route, name, req, res, query, rendering);
        return;
      case 'DELETE':
        await this.serveDelete(route, name, req, res, query);
        return;
      default:
        throw methodNotAllowed();
    }
  }

  private sendObject(res: http.ServerResponse, code: number, def: ResourceDef, object: KubeObject, rendering: Rendering, warnings: string[] = []): void {
    if (rendering.as === 'table') {
      send(res, code, buildTable(def, [object], { resourceVersion: object.metadata.resourceVersion ?? '' }, { include: rendering.include, apiVersion: rendering.apiVersion }), warnings);
    } else if (rendering.as === 'metadata') {
      send(res, code, partialMetadata(rendering.apiVersion, object), warnings);
    } else {
      send(res, code, asServed(def, object), warnings);
    }
  }

  private listParams(route: ResourceRoute, query: URLSearchParams): Record<string, string | number | undefined> {
    const limit = query.get('limit');
    return {
      namespace: route.namespace,
      labelSelector: query.get('labelSelector') ?? undefined,
      fieldSelector: query.get('fieldSelector') ?? undefined,
      limit: limit ? Number(limit) : undefined,
      continue: query.get('continue') ?? undefined,
      resourceVersion: query.get('resourceVersion') ?? undefined,
      resourceVersionMatch: query.get('resourceVersionMatch') ?? undefined,
    };
  }

  private async serveCollectionRead(route: ResourceRoute, res: http.ServerResponse, query: URLSearchParams, rendering: Rendering): Promise<void> {
    const watch = query.get('watch') === 'true' || query.get('watch') === '1';
    const option = (name: string): Record<string, string> => (query.has(name) ? { [name]: query.get(name) ?? '' } : {});
    validateListOptions({ watch, ...option('resourceVersion'), ...option('resourceVersionMatch'), ...option('sendInitialEvents'), ...option('continue') });
    if (watch) {
      await this.serveWatch(route, res, query, rendering);
      return;
    }
    const params = this.listParams(route, query) as Parameters<ClusterApi['list']>[1];
    const result = await this.api.list(route.def, params);
    if (rendering.as === 'table') {
      const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
      if (result.continue) meta.continue = result.continue;
      send(res, 200, buildTable(route.def, result.items, meta, { include: rendering.include, apiVersion: rendering.apiVersion }));
    } else if (rendering.as === 'metadata') {
      const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
      if (result.continue) meta.continue = result.continue;
      send(res, 200, { kind: 'PartialObjectMetadataList', apiVersion: rendering.apiVersion, metadata: meta, items: result.items.map((o) => partialMetadata(rendering.apiVersion, o)) });
    } else {
      send(res, 200, this.api.listObject(route.def, result));
    }
  }

  private async serveWatch(route: ResourceRoute, res: http.ServerResponse, query: URLSearchParams, rendering: Rendering): Promise<void> {
    let headersWritten = false;
    let tableHeadersSent = false;
    const flush = (): void => {
      if (headersWritten) return;
      headersWritten = true;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
    };
    const render = (type: string, object: KubeObject | Status): unknown => {
      if (type === 'ERROR' || type === 'BOOKMARK' || rendering.as === 'object') return object;
      const kubeObject = object as KubeObject;
      if (rendering.as === 'metadata') return partialMetadata(rendering.apiVersion, kubeObject);
      const table = buildTable(route.def, [kubeObject], { resourceVersion: kubeObject.metadata.resourceVersion ?? '' }, {
        include: rendering.include,
        apiVersion: rendering.apiVersion,
        noHeaders: tableHeadersSent,
      });
      tableHeadersSent = true;
      return table;
    };
    const timeout = query.get('timeoutSeconds');
    const params = {
      ...(this.listParams(route, query) as Record<string, string | undefined>),
      resourceVersion: query.get('resourceVersion') ?? undefined,
      allowWatchBookmarks: query.get('allowWatchBookmarks') === 'true',
      sendInitialEvents: query.get('sendInitialEvents') === 'true',
      timeoutSeconds: timeout ? Number(timeout) : undefined,
    };
    const handle = await this.api.watch(route.def, params, {
      send: (type, object) => {
        flush();
        res.write(`${JSON.stringify({ type, object: render(type, object) })}\n`);
      },
      end: () => {
        flush();
        res.end();
      },
    });
    flush();
    res.on('close', () => handle.stop());
  }

  private async serveCreate(route: ResourceRoute, req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams, rendering: Rendering): Promise<void> {
    const body = decodeBody(await readBody(req), writeMediaType(req, route.def));
    const result = await this.api.create(route.def, route.namespace, body, writeOptions(query));
    this.sendObject(res, result.code, route.def, result.object, rendering, result.warnings);
  }

  private async servePatch(route: ResourceRoute, name: string, req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams, rendering: Rendering): Promise<void> {
    const type = PATCH_CONTENT_TYPES[mediaType(req)];
    if (!type && route.def.crdName === undefined) {
      // What kube-apiserver 1.36 answers for a built-in kind: a generic Status, not the list of types.
      throw new ApiError({ message: '415: Unsupported Media Type', reason: 'UnsupportedMediaType', details: {}, code: 415 });
    }
    if (!type || (type === 'strategic' && !route.def.strategicMergeKeys)) throw unsupportedMediaType(CUSTOM_RESOURCE_PATCH_TYPES);
    const patch = decodeBody(await readBody(req), mediaType(req));
    const options = { ...writeOptions(query), force: query.get('force') === 'true' };
    const result = await this.api.patch(route.def, route.namespace, name, type, patch, route.subresource, options);
    this.sendObject(res, result.code, route.def, result.object, rendering, result.warnings);
  }

  private async deleteParams(req: http.IncomingMessage, query: URLSearchParams): Promise<DeleteParams> {
    const params: DeleteParams = writeOptions(query);
    const raw = await readBody(req);
    if (raw.toString('utf8').trim() !== '') {
      const body = decodeBody(raw, mediaType(req)) as Record<string, unknown>;
      const preconditions = body.preconditions as DeleteParams['preconditions'] | undefined;
      if (preconditions) params.preconditions = preconditions;
      if (typeof body.propagationPolicy === 'string') params.propagationPolicy = body.propagationPolicy as DeleteParams['propagationPolicy'];
      if (Array.isArray(body.dryRun) && body.dryRun.includes('All')) params.dryRun = true;
    }
    const policy = query.get('propagationPolicy');
    if (policy) params.propagationPolicy = policy as DeleteParams['propagationPolicy'];
    return params;
  }

  private async serveDelete(route: ResourceRoute, name: string, req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams): Promise<void> {
    const result = await this.api.delete(route.def, route.namespace, name, await this.deleteParams(req, query));
    if (!result.removed) {
      send(res, result.code, asServed(route.def, result.object), result.warnings);
      return;
    }
    // The generic store's answer to a delete that removed the object: its name, group, resource and uid.
    const { group, plural } = route.def;
    const details = { name, ...(group === '' ? {} : { group }), kind: plural, uid: result.object.metadata.uid };
    send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, result.warnings);
  }

  private async serveDeleteCollection(route: ResourceRoute, req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams): Promise<void> {
    const params = { ...(this.listParams(route, query) as Record<string, string | undefined>), ...(await this.deleteParams(req, query)) };
    send(res, 200, await this.api.deleteCollection(route.def, params as Parameters<ClusterApi['deleteCollection']>[1]));
  }
}

