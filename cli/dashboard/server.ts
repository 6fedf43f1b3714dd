/**
 * The dashboard's HTTP server: loopback only, one random token per run required on every
 * path, GET only. The page holds no credential and no value unescaped. The page polls
 * `/fragment`; `/events` streams the same fragments as Server-Sent Events and
 * `/snapshot.json` serves the data. The fleet is read only when asked: by a poll finding
 * the last read older than `refreshMs`, or every `refreshMs` while a stream is open.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FleetSnapshot } from './gather';
import { renderFleet, renderPage, SNAPSHOT_EVENT } from './page';

/** The only address the dashboard binds: never reachable from another machine. */
export const DASHBOARD_HOST = '127.0.0.1';
/** Event streams served at once; more are refused (each holds a socket and gets every update). */
export const MAX_STREAMS = 16;
/** Upper bound of one rendered response; a fragment past it is replaced by a notice. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export interface DashboardServerOptions {
  /** 0 picks a free port. */
  port: number;
  refreshMs: number;
  gather(): Promise<FleetSnapshot>;
  /** Reports a failed read (the page keeps its last fragment). */
  onError?(error: unknown): void;
}

export interface DashboardServer {
  /** The page's URL, with the token. */
  url: string;
  port: number;
  token: string;
  /** Reads the fleet now and sends it to every listener; resolves when sent. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

function tokenMatches(given: string | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function boundedFragment(snapshot: FleetSnapshot): string {
  const html = renderFleet(snapshot);
  return Buffer.byteLength(html) <= MAX_RESPONSE_BYTES ? html : '<p class="note">The fleet view is larger than the page allows; see kubectl ome admin fleet.</p>';
}

/** Starts the server on 127.0.0.1; the first read happens before it listens. */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const token = randomBytes(24).toString('base64url');
  const streams = new Set<ServerResponse>();
  let snapshot = await options.gather();
  let fragment = boundedFragment(snapshot);
  let readAt = Date.now();
  let reading: Promise<void> | undefined;
  let port = 0;

  const send = (response: ServerResponse): void => {
    response.write(`event: ${SNAPSHOT_EVENT}\ndata: ${JSON.stringify({ collectedAt: snapshot.collectedAt, html: fragment })}\n\n`);
  };

  const refresh = (): Promise<void> => {
    // One read at a time: a slow cluster must not pile reads up.
    reading ??= options
      .gather()
      .then((fresh) => {
        readAt = Date.now();
        snapshot = fresh;
        fragment = boundedFragment(fresh);
        for (const stream of streams) send(stream);
      })
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  const refuse = (response: ServerResponse, status: number, text: string): void => {
    response.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
    response.end(`${text}\n`);
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', `http://${DASHBOARD_HOST}`);
    // A page of another origin resolving its name to 127.0.0.1 sends its own Host: refuse it.
    const host = request.headers.host ?? '';
    if (host !== `${DASHBOARD_HOST}:${port}` && host !== `localhost:${port}`) return refuse(response, 403, 'forbidden');
    if (!tokenMatches(url.searchParams.get('token'), token)) return refuse(response, 401, 'the dashboard needs the token of its URL');
    if (request.method !== 'GET') return refuse(response, 405, 'read only');
    if (url.pathname === '/') {
      const nonce = randomBytes(16).toString('base64');
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      });
      response.end(renderPage(fragment, nonce, Math.round(options.refreshMs / 1000)));
      return;
    }
    if (url.pathname === '/fragment') {
      // A page polling after a quiet spell gets the fleet as it is now, not as it was.
      const fresh = Date.now() - readAt >= options.refreshMs ? refresh() : Promise.resolve();
      void fresh.then(() => {
        response.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ collectedAt: snapshot.collectedAt, html: fragment }));
      });
      return;
    }
    if (url.pathname === '/snapshot.json') {
      response.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json' });
      response.end(JSON.stringify(snapshot));
      return;
    }
    if (url.pathname === '/events') {
      if (streams.size >= MAX_STREAMS) return refuse(response, 503, 'too many open dashboards');
      response.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream', Connection: 'keep-alive' });
      response.write(`retry: ${options.refreshMs}\n\n`);
      streams.add(response);
      request.on('close', () => streams.delete(response));
      send(response);
      // A page opened after a quiet spell gets the fleet as it is now, not as it was.
      if (Date.now() - readAt >= options.refreshMs) void refresh();
      return;
    }
    refuse(response, 404, 'not found');
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, DASHBOARD_HOST, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const timer = setInterval(() => {
    if (streams.size > 0) void refresh();
  }, options.refreshMs);

  return {
    url: `http://${DASHBOARD_HOST}:${port}/?token=${token}`,
    port,
    token,
    refresh,
    async close() {
      clearInterval(timer);
      for (const stream of streams) stream.end();
      streams.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await reading;
    },
  };
}
