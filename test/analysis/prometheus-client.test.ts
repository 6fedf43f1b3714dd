import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryInstant, queryUrl } from '../../shared/adapters/prometheus/client';
import {
  PrometheusAddressError,
  PrometheusApiError,
  PrometheusHttpError,
  PrometheusRefusedError,
  PrometheusResponseError,
  PrometheusTimeoutError,
  PrometheusUnreachableError,
} from '../../shared/adapters/prometheus/errors';
import { freePort } from '../support/test-prometheus';
import { json, startHttpPeer, vectorAnswer, viaTls, type HttpPeer } from '../support/http-peer';

const time = new Date('2026-12-01T20:00:00Z');

describe('Function: queryUrl', () => {
  it.each<[string, string]>([
    ['http://prom:9090', 'http://prom:9090/api/v1/query'],
    ['http://prom:9090/', 'http://prom:9090/api/v1/query'],
    ['https://mimir.example/prometheus', 'https://mimir.example/prometheus/api/v1/query'],
    ['https://mimir.example/prometheus/', 'https://mimir.example/prometheus/api/v1/query'],
  ])('queries %s at %s', (address, want) => {
    expect(queryUrl(address).toString()).toBe(want);
  });

  it.each([['not a url'], ['prometheus:9090'], ['ftp://prom'], ['']])('refuses %j as an address', (address) => {
    expect(() => queryUrl(address)).toThrow(PrometheusAddressError);
  });
});

describe('Function: queryInstant against an HTTP peer', () => {
  let peer: HttpPeer;
  beforeAll(async () => {
    peer = await startHttpPeer();
  });
  afterAll(async () => {
    await peer.close();
  });

  it('POSTs the query and its time as a form, with the bearer token and headers', async () => {
    peer.handle(vectorAnswer('0.01', '0.04'));
    const before = peer.requests.length;
    const tls = viaTls(peer);
    const reading = await queryInstant({ address: tls.address, fetch: tls.fetch, query: 'sum(x{a="b"})', time, token: 's3cret', headers: { 'X-Scope-OrgID': 'tenant-a' } });
    expect(reading).toEqual({ kind: 'values', values: [0.01, 0.04] });
    const request = peer.requests[before];
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/api/v1/query');
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ query: 'sum(x{a="b"})', time: String(time.getTime() / 1000) });
    expect(request?.headers.authorization).toBe('Bearer s3cret');
    expect(request?.headers['x-scope-orgid']).toBe('tenant-a');
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('lets an Authorization header override the token, as upstream sets headers after it', async () => {
    peer.handle(vectorAnswer('1'));
    const before = peer.requests.length;
    const tls = viaTls(peer);
    await queryInstant({ address: tls.address, fetch: tls.fetch, query: 'up', time, token: 's3cret', headers: { authorization: 'Basic abc' } });
    expect(peer.requests[before]?.headers.authorization).toBe('Basic abc');
  });

  it('refuses a token over plain http before sending anything', async () => {
    const before = peer.requests.length;
    const error = await queryInstant({ address: peer.address, query: 'up', time, token: 's3cret' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusRefusedError);
    expect((error as Error).message).toBe(`refusing to send a bearer token over plain http to ${peer.address}: use https`);
    expect(peer.requests.length).toBe(before);
  });

  it('sends no Authorization header without a token', async () => {
    peer.handle(vectorAnswer('1'));
    const before = peer.requests.length;
    await queryInstant({ address: peer.address, query: 'up', time });
    expect(peer.requests[before]?.headers.authorization).toBeUndefined();
  });

  it('falls back to GET when the server refuses POST with 405', async () => {
    peer.handle((request, response) => (request.method === 'POST' ? json(405, {})(request, response) : vectorAnswer('7')(request, response)));
    const before = peer.requests.length;
    const tls = viaTls(peer);
    expect(await queryInstant({ address: tls.address, fetch: tls.fetch, query: 'up', time, token: 't' })).toEqual({ kind: 'values', values: [7] });
    const get = peer.requests[before + 1];
    expect(get?.method).toBe('GET');
    expect(new URL(get?.url ?? '', peer.address).searchParams.get('query')).toBe('up');
    expect(get?.headers.authorization).toBe('Bearer t');
  });

  it('throws PrometheusApiError with errorType for an error body', async () => {
    peer.handle(json(400, { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": parse error' }));
    const error = await queryInstant({ address: peer.address, query: 'sum(', time }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusApiError);
    expect(error).toMatchObject({ errorType: 'bad_data', message: 'bad_data: invalid parameter "query": parse error', retryable: false });
  });

  it('throws PrometheusHttpError for a status without an error body, never echoing the token', async () => {
    peer.handle((_request, response) => {
      response.writeHead(401);
      response.end('token s3cret refused');
    });
    const tls = viaTls(peer);
    const error = await queryInstant({ address: tls.address, fetch: tls.fetch, query: 'up', time, token: 's3cret' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusHttpError);
    expect(error).toMatchObject({ status: 401, errorType: 'client_error', message: 'client_error: client error: 401' });
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('does not follow a redirect, so the token goes nowhere else', async () => {
    const elsewhere = await startHttpPeer(vectorAnswer('0'));
    try {
      peer.handle((_request, response) => {
        response.writeHead(307, { Location: `${elsewhere.address}/api/v1/query` });
        response.end();
      });
      const tls = viaTls(peer);
      const error = await queryInstant({ address: tls.address, fetch: tls.fetch, query: 'up', time, token: 's3cret' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'PrometheusHttpError', status: 307, message: 'client_error: client error: 307' });
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('throws a retryable PrometheusHttpError for a 502', async () => {
    peer.handle((_request, response) => {
      response.writeHead(502);
      response.end('<html>bad gateway</html>');
    });
    const error = await queryInstant({ address: peer.address, query: 'up', time }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PrometheusHttpError', status: 502, message: 'server_error: server error: 502', retryable: true });
  });

  it('throws PrometheusResponseError for a 200 that is not a Prometheus answer', async () => {
    peer.handle((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end('<html><body>model server</body></html>');
    });
    const error = await queryInstant({ address: peer.address, query: 'up', time }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusResponseError);
    expect((error as Error).message).toMatch(/^bad_response: /);
  });

  it('stops reading a body over the cap, declared or streamed', async () => {
    const big = 'x'.repeat(4096);
    peer.handle((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(big.length) });
      response.end(big);
    });
    await expect(queryInstant({ address: peer.address, query: 'up', time, maxResponseBytes: 1024 })).rejects.toThrow('bad_response: response body exceeds 1024 bytes');
    peer.handle((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' }); // chunked: no length to trust
      for (let i = 0; i < 4; i += 1) response.write(big);
      response.end();
    });
    await expect(queryInstant({ address: peer.address, query: 'up', time, maxResponseBytes: 1024 })).rejects.toBeInstanceOf(PrometheusResponseError);
  });

  it('refuses a result with more series than the cap', async () => {
    peer.handle(vectorAnswer('1', '2', '3'));
    await expect(queryInstant({ address: peer.address, query: 'up', time, maxSeries: 2 })).rejects.toThrow('bad_response: result has 3 series, more than the 2 the plane reads');
  });

  it('maps an aborted request to a deadline error', async () => {
    peer.handle(() => {
      // never answers: the caller's signal ends the request
    });
    const controller = new AbortController();
    const pending = queryInstant({ address: peer.address, query: 'up', time, signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new DOMException('timed out', 'TimeoutError'));
    const error = await pending;
    expect(error).toBeInstanceOf(PrometheusTimeoutError);
    expect((error as Error).message).toBe(`Post "${peer.address}/api/v1/query": context deadline exceeded`);
  });
});

describe('Function: queryInstant with nothing listening', () => {
  it('throws PrometheusUnreachableError naming the refused connection', async () => {
    const port = await freePort();
    const error = await queryInstant({ address: `http://127.0.0.1:${port}`, query: 'up', time }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusUnreachableError);
    expect((error as Error).message).toMatch(new RegExp(`^Post "http://127.0.0.1:${port}/api/v1/query": connection refused`));
    expect(error).toMatchObject({ retryable: true });
  });
});
