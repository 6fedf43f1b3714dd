import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { connectionFromKubeConfig, type ClusterConnection } from '../../../shared/adapters/kubernetes';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Route = (request: RecordedRequest, response: ServerResponse) => void;

export interface CannedServer {
  url: string;
  kubeConfig: KubeConfig;
  /** The CLI's connection (client-node's KubeConfig) to this server. */
  connection: ClusterConnection;
  requests: RecordedRequest[];
  /** What the next requests get; the default answers 200 `{}`. */
  route: Route;
  stop(): Promise<void>;
}

/** Answers with a JSON body. */
export function reply(response: ServerResponse, code: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain' : 'application/json' });
  response.end(text);
}

/** A meta/v1 Status as the API server writes failures. */
export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** A kubeconfig for a plain-HTTP loopback server (client-node requires skip-TLS for http). */
export function kubeConfigFor(url: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'canned', server: url, skipTLSVerify: true }],
    users: [{ name: 'canned', token: 'test-token' }],
    contexts: [{ name: 'canned', cluster: 'canned', user: 'canned' }],
    currentContext: 'canned',
  });
  return kubeConfig;
}

/** The CLI's connection to a plain-HTTP loopback server. */
export function connectionFor(url: string): ClusterConnection {
  return connectionFromKubeConfig(kubeConfigFor(url));
}

/** A real HTTP peer on 127.0.0.1 that records requests and answers as `route` says. */
export async function startCannedServer(): Promise<CannedServer> {
  const requests: RecordedRequest[] = [];
  const state: { route: Route } = { route: (_request, response) => reply(response, 200, {}) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const recorded = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      state.route(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeConfig: kubeConfigFor(url),
    connection: connectionFor(url),
    requests,
    get route() {
      return state.route;
    },
    set route(route: Route) {
      state.route = route;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
