/**
 * A small HTTP server standing in for a metrics source in tests: it records every request
 * (method, path, headers, body) and answers with whatever the test sets.
 */
import type { AddressInfo, Socket } from 'node:net';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type PeerHandler = (request: RecordedRequest, response: ServerResponse) => void;

export interface HttpPeer {
  readonly address: string;
  readonly requests: RecordedRequest[];
  handle(handler: PeerHandler): void;
  close(): Promise<void>;
}

/** Answers `{status:"success"}` with the given instant vector values, one series per value. */
export function vectorAnswer(...values: string[]): PeerHandler {
  const result = values.map((value, i) => ({ metric: { pod: `pod-${i}` }, value: [1700000000, value] }));
  return json(200, { status: 'success', data: { resultType: 'vector', result } });
}

export function json(status: number, body: unknown): PeerHandler {
  return (_request, response) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
}

export async function startHttpPeer(initial: PeerHandler = vectorAnswer('0')): Promise<HttpPeer> {
  let handler = initial;
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request = { method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body: Buffer.concat(chunks).toString() };
      requests.push(request);
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `http://127.0.0.1:${port}`,
    requests,
    handle(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The peer as if it served https: an `https://` address with the peer's host and port, and
 * a fetch that carries what is addressed there to the peer over http, as a TLS-terminating
 * proxy in front of it would. For tests of what is sent to an https source.
 */
export function viaTls(peer: HttpPeer): { readonly address: string; readonly fetch: typeof fetch } {
  const plain = new URL(peer.address);
  const address = `https://${plain.host}`;
  return {
    address,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin !== address) return Promise.reject(new Error(`viaTls: ${url.origin} is not ${address}`));
      url.protocol = 'http:';
      return fetch(url, init);
    },
  };
}

/** A server that accepts every request and never answers it: what a hung service looks like. */
export interface SilentServer {
  endpoint: string;
  /** Requests received so far. */
  requests(): number;
  /** Drops every open connection (between tests) and counts from 0 again. */
  reset(): void;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer(() => {
    requests += 1;
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    reset() {
      for (const socket of sockets) socket.destroy();
      requests = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
