/**
 * The dashboard server over real HTTP on 127.0.0.1: the token is required on every path,
 * the event stream included; a foreign Host is refused; the page carries no token and a
 * strict CSP; a refresh sends the new fragment to an open stream; the polled fragment and
 * the JSON snapshot follow.
 */
import { request, type IncomingMessage } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FleetSnapshot } from '../../cli/dashboard/gather';
import { SNAPSHOT_EVENT } from '../../cli/dashboard/page';
import { startDashboardServer, type DashboardServer } from '../../cli/dashboard/server';

function snapshotWith(name: string): FleetSnapshot {
  return {
    collectedAt: '2026-10-08T14:00:00.000Z',
    waves: [],
    clusters: [{ id: 'local', mode: 'standalone', server: 'https://127.0.0.1:6443', lagMs: 1_500, lastCheckpointAt: null, lastError: null, inferenceServices: 1 }],
    drift: [{ cluster: 'local', namespace: 'prod', name, reason: 'RevisionMismatch', message: 'pinned r-1, live spec differs' }],
    pins: [],
    gc: [],
    rollouts: [],
    truncated: {},
  };
}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function get(server: DashboardServer, path: string, host = `127.0.0.1:${server.port}`): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens the event stream and hands out its events one by one, as they arrive. */
function openStream(server: DashboardServer): Promise<{ next(): Promise<{ event: string; data: string }>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: `/events?token=${server.token}` }, (response) => {
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream');
      response.setEncoding('utf8');
      let buffer = '';
      const events: Array<{ event: string; data: string }> = [];
      const waiting: Array<(value: { event: string; data: string }) => void> = [];
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) {
            const waiter = waiting.shift();
            if (waiter) waiter({ event, data });
            else events.push({ event, data });
          }
        }
      });
      resolve({
        next: () => {
          const queued = events.shift();
          return queued ? Promise.resolve(queued) : new Promise((done) => waiting.push(done));
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard server', () => {
  let server: DashboardServer;
  let current = snapshotWith('first');

  beforeAll(async () => {
    // A long refresh: the test drives updates with refresh(), nothing waits on a timer.
    server = await startDashboardServer({ port: 0, refreshMs: 3_600_000, gather: async () => current });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('listens on 127.0.0.1 only and prints a URL with a long random token', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it.each(['/', '/fragment', '/events', '/snapshot.json', '/nothing'])('answers %s without the token with 401', async (path) => {
    expect((await get(server, path)).status).toBe(401);
    expect((await get(server, `${path}?token=wrong`)).status).toBe(401);
    expect((await get(server, `${path}?token=${server.token.slice(0, -1)}`)).status).toBe(401);
  });

  it('refuses a request naming another host, even with the token (DNS rebinding)', async () => {
    expect((await get(server, `/?token=${server.token}`, `evil.example:${server.port}`)).status).toBe(403);
  });

  it('serves the page with the first snapshot, a strict CSP and no token inside', async () => {
    const page = await get(server, `/?token=${server.token}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'nonce-[^']+'; /);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<td>first</td>');
    expect(page.body).not.toContain(server.token);
  });

  it('streams the current fragment at once and each refresh after it', async () => {
    const stream = await openStream(server);
    try {
      const first = await stream.next();
      expect(first.event).toBe(SNAPSHOT_EVENT);
      expect((JSON.parse(first.data) as { html: string }).html).toContain('<td>first</td>');

      current = snapshotWith('<second>');
      await server.refresh();
      const second = await stream.next();
      const html = (JSON.parse(second.data) as { html: string }).html;
      expect(html).toContain('<td>&lt;second&gt;</td>');
      expect(html).not.toContain('<second>');
    } finally {
      stream.close();
    }
  });

  it('serves the fragment the page polls, escaped, with the token', async () => {
    const reply = await get(server, `/fragment?token=${server.token}`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect((JSON.parse(reply.body) as { html: string }).html).toContain('<td>&lt;second&gt;</td>');
  });

  it('serves the snapshot as JSON with the token', async () => {
    const reply = await get(server, `/snapshot.json?token=${server.token}`);
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.body) as FleetSnapshot).drift[0]?.name).toBe('<second>');
  });
});
