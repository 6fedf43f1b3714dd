/**
 * The admission webhook's front door on one machine: an HTTP(S) server that runs the
 * CloudFront Function of the deployed stack (infra/front-door/viewer-request.js, the same
 * file) on every call, answers what it refuses, and passes the rest to the webhook's
 * function URL with the origin secret, as the distribution's origin custom header does.
 *
 * The function's `cloudfront` key value store is a JSON file here (the data directory's
 * `front-door.json`), written by the registration, `kubectl ome admin cluster register
 * --front-door-file` among them: a cluster's token digest under `cluster/<id>`. `crypto`
 * is Node's.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import { ORIGIN_SECRET_HEADER } from '../shared/domain/webhook/webhook-token';
import { watchFileFrontDoorStore } from '../shared/adapters/front-door';
import { FRONT_DOOR_FUNCTION } from '../infra/paths';

interface ViewerRequest {
  method: string;
  uri: string;
  querystring: Record<string, { value: string }>;
  headers: Record<string, { value: string }>;
}

interface EdgeResponse {
  statusCode: number;
  statusDescription?: string;
  headers?: Record<string, { value: string }>;
}

type ViewerRequestHandler = (event: { version: string; context: { eventType: string }; viewer: { ip: string }; request: ViewerRequest }) => Promise<ViewerRequest | EdgeResponse>;

/** The file the local front door reads its entries from, in the data directory. */
export const LOCAL_FRONT_DOOR_FILE = 'front-door.json';

/** The store behind `cf.kvs()`: `get` fails for a missing key, as CloudFront's does. */
function keyValueStoreOf(lookup: (key: string) => string | undefined): { get(key: string): Promise<string>; exists(key: string): Promise<boolean> } {
  return {
    get: async (key) => {
      const value = lookup(key);
      if (value === undefined) throw new Error(`Key ${key} not found`);
      return value;
    },
    exists: async (key) => lookup(key) !== undefined,
  };
}

/** Loads the CloudFront Function's source with its two imports given by this process; `lookup` answers `cf.kvs().get`. */
export function loadViewerRequestFunction(lookup: (key: string) => string | undefined, path = FRONT_DOOR_FUNCTION): ViewerRequestHandler {
  const source = readFileSync(path, 'utf8').replace(/^import (\w+) from '(cloudfront|crypto)';$/gm, '');
  const store = keyValueStoreOf(lookup);
  const cf = { kvs: () => store };
  const crypto = { createHash: (algorithm: string) => createHash(algorithm) };
  return runInNewContext(`${source}\nhandler;`, { cf, crypto }, { filename: path }) as ViewerRequestHandler;
}

export interface FrontDoorCounts {
  /** Calls answered by the front door itself. */
  refused: number;
  /** Calls passed to the function URL. */
  passed: number;
}

export interface FrontDoor {
  url: string;
  /** The entries' file (a FrontDoorStore of shared/adapters/front-door writes it). */
  storePath: string;
  counts(): FrontDoorCounts;
  stop(): Promise<void>;
}

function viewerRequestOf(request: IncomingMessage): ViewerRequest {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers: ViewerRequest['headers'] = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = { value: Array.isArray(value) ? value.join(',') : value };
  const querystring: ViewerRequest['querystring'] = {};
  for (const [name, value] of url.searchParams) querystring[name] = { value };
  return { method: request.method ?? 'GET', uri: url.pathname, querystring, headers };
}

function isEdgeResponse(result: ViewerRequest | EdgeResponse): result is EdgeResponse {
  return 'statusCode' in result;
}

/** Starts the front door before `origin` (the function URL's base, plain HTTP on loopback), with its entries in `storePath`. */
export async function startFrontDoor(options: { origin: string; originSecret: string; storePath: string; tls?: { cert: Buffer; key: Buffer } }): Promise<FrontDoor> {
  const handler = loadViewerRequestFunction(watchFileFrontDoorStore(options.storePath));
  const origin = new URL(options.origin);
  const counts: FrontDoorCounts = { refused: 0, passed: 0 };

  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const refuse = (statusCode: number, statusDescription: string): void => {
      counts.refused += 1;
      request.resume();
      response.writeHead(statusCode, statusDescription, { 'cache-control': 'no-store' });
      response.end();
    };
    const viewer = viewerRequestOf(request);
    handler({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: request.socket.remoteAddress ?? '' }, request: viewer }).then(
      (result) => {
        if (isEdgeResponse(result)) return refuse(result.statusCode, result.statusDescription ?? '');
        counts.passed += 1;
        const headers = { ...request.headers, host: origin.host, [ORIGIN_SECRET_HEADER]: options.originSecret };
        const upstream = httpRequest({ host: origin.hostname, port: origin.port, method: request.method, path: request.url, headers }, (reply) => {
          response.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(response);
        });
        upstream.on('error', () => {
          if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
          response.end();
        });
        request.pipe(upstream);
      },
      // A function that throws is an error at the edge: 503, as CloudFront answers.
      () => refuse(503, 'Service Unavailable'),
    );
  };
  const server: Server = options.tls ? createTlsServer(options.tls, answer) : createServer(answer);
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    storePath: options.storePath,
    counts: () => ({ ...counts }),
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
