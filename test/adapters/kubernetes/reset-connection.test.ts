/**
 * A kept-alive connection the API server closes as the next request goes out on it: the
 * request never reached the server, so a read is sent again on a new connection instead of
 * failing the reconcile (which would wait for its hint's redelivery). A write is not: the
 * transport cannot tell whether the server acted on it. Against a raw TCP peer that answers
 * the first request of each connection and resets the connection at the second.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeTransport } from '../../../shared/adapters/kubernetes/transport';
import { UnavailableError } from '../../../shared/domain/errors';

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}';

interface Peer {
  url: string;
  /** Requests received, as `<connection> <method> <path>`. */
  seen: string[];
  close(): Promise<void>;
}

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function startResettingPeer(): Promise<Peer> {
  const seen: string[] = [];
  let connections = 0;
  const sockets = new Set<Socket>();
  server = createServer((socket) => {
    const connection = (connections += 1);
    sockets.add(socket);
    let requests = 0;
    let buffered = '';
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      // One request line per head; the tests send no bodies that span packets.
      while (buffered.includes('\r\n\r\n')) {
        const end = buffered.indexOf('\r\n\r\n');
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        buffered = buffered.slice(end + 4 + length);
        const [method, path] = head.split(' ');
        seen.push(`${connection} ${method} ${path}`);
        requests += 1;
        if (requests === 1) socket.write(OK);
        else socket.resetAndDestroy();
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

function transportTo(url: string): KubeTransport {
  return new KubeTransport({ server: url, applyTo: async () => undefined }, { requestTimeoutMs: 5_000, userAgent: 'reset-test' });
}

describe('Kubernetes adapter: a kept-alive connection reset under a request', () => {
  it('sends a read again on a new connection, once, and answers it', async () => {
    // Prepare
    const peer = await startResettingPeer();
    const transport = transportTo(peer.url);

    // Act: the second GET goes out on the first one's connection, which the peer resets
    await transport.request({ method: 'GET', path: '/api/v1/namespaces/a' });
    const second = await transport.request({ method: 'GET', path: '/api/v1/namespaces/b' });
    transport.close();
    await peer.close();

    // Assess
    expect(second).toEqual({});
    expect(peer.seen).toEqual(['1 GET /api/v1/namespaces/a', '1 GET /api/v1/namespaces/b', '2 GET /api/v1/namespaces/b']);
  });

  it('fails a write on a reset connection without sending it again', async () => {
    // Prepare
    const peer = await startResettingPeer();
    const transport = transportTo(peer.url);
    await transport.request({ method: 'GET', path: '/api/v1/namespaces/a' });

    // Act
    const write = transport.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'b' } } });

    // Assess
    await expect(write).rejects.toBeInstanceOf(UnavailableError);
    transport.close();
    await peer.close();
    expect(peer.seen).toEqual(['1 GET /api/v1/namespaces/a', '1 POST /api/v1/namespaces']);
  });
});
