import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { InvalidInputError, ThrottledError, UnavailableError } from '../../domain/errors';
import type { ClusterConnection, ConnectionRequestOptions } from './connection';
import { errorFromStatus, errorFromTransport, parseStatus } from './errors';
import { parseRetryAfter } from './rate-limit';
import type { RequestPriority, TokenBucket } from './rate-limit';

/** A 429 is retried this often within one call; then ThrottledError goes to the caller (and the platform redelivers). */
export const MAX_THROTTLED_RETRIES = 3;
/** The longest one Retry-After is waited for within a call, whatever the server asks. */
export const MAX_RETRY_AFTER_WAIT_MS = 10_000;
/** Kept back from the invocation's remaining time when deciding whether a wait still fits. */
export const THROTTLE_DEADLINE_MARGIN_MS = 1_000;

export type Query = Record<string, string | number | boolean | undefined>;

export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
}

export interface TransportOptions {
  /** Per request, from sending to the last byte of the answer. Watches have none. */
  requestTimeoutMs: number;
  userAgent: string;
  /** Called when the server answers 401: the credential was refused and should not be reused. */
  onUnauthorized?: () => void;
  /** The cluster's client-side rate limit, shared by its clients in this process; none when absent. */
  rateLimiter?: TokenBucket;
  /**
   * Milliseconds the current invocation has left, when known: a wait for the rate limit or
   * a Retry-After that would not fit fails at once with ThrottledError instead.
   */
  remainingTimeMs?: () => number | undefined;
  /** 429s retried within one call (default MAX_THROTTLED_RETRIES); 0 hands every 429 to the caller. */
  maxThrottledRetries?: number;
  /** The priority of the request being sent (default user): sweeps yield to user work in the rate limit. */
  priority?: () => RequestPriority;
  /** Epoch ms; default Date.now (tests pass a fake clock). */
  now?: () => number;
  /** Waits `ms`; default a timer (tests record the waits instead). */
  sleep?: (ms: number) => Promise<void>;
  /** Called after each request with its outcome (the CLI's `-v` log). */
  onResponse?: (record: ResponseRecord) => void;
}

/** One request and how it ended: the status, or the failure below HTTP. */
export interface ResponseRecord {
  method: string;
  url: string;
  /** The HTTP status; absent when no answer came. */
  status?: number;
  /** Why no answer came. */
  error?: string;
  elapsedMs: number;
}

const waitFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * HTTP to one API server, authenticated by a ClusterConnection (from a cluster record, or
 * from client-node's KubeConfig in the CLI). Requests go through node:http(s) rather than client-node's
 * generated clients so any kind is reachable by its ResourceType without discovery, the
 * status subresource and dry runs work for every kind, and a watch stream is read with
 * backpressure and its error Status kept. Connections are kept alive and reused.
 */
export class KubeTransport {
  private readonly server: URL;
  private agent: http.Agent | undefined;

  constructor(
    private readonly connection: ClusterConnection,
    private readonly options: TransportOptions,
  ) {
    try {
      this.server = new URL(connection.server);
    } catch (error) {
      throw new InvalidInputError(`the API server "${connection.server}" is not a URL`, { cause: error });
    }
  }

  /**
   * Sends a request and parses the JSON answer; every failure is a typed error. Waits for
   * the cluster's rate limit first, and on 429 waits the Retry-After and tries again (a
   * 429 means the server did not act on the request, so any verb may be resent).
   */
  async request<T>(request: TransportRequest): Promise<T> {
    let response: IncomingMessage;
    let text: string;
    let started = Date.now();
    for (let attempt = 0; ; attempt += 1) {
      await this.throttle(request);
      started = Date.now();
      try {
        response = await this.send(request, undefined, this.options.requestTimeoutMs);
        text = await readText(response, request);
      } catch (error) {
        this.record(request, started, undefined, error);
        throw error;
      }
      if (response.statusCode !== 429) break;
      this.record(request, started, 429, undefined);
      const retryAfterMs = this.noteThrottled(response, text);
      const waitMs = Math.min(retryAfterMs, MAX_RETRY_AFTER_WAIT_MS);
      if (attempt >= (this.options.maxThrottledRetries ?? MAX_THROTTLED_RETRIES) || !this.fitsInInvocation(waitMs)) {
        throw errorFromStatus(429, parseStatus(text), text, request);
      }
      // With a limiter the bucket is paused until then, and the next throttle() waits it out.
      if (!this.options.rateLimiter) await (this.options.sleep ?? waitFor)(waitMs);
    }
    const code = response.statusCode ?? 0;
    this.record(request, started, code, undefined);
    if (code === 401) this.options.onUnauthorized?.();
    if (code < 200 || code >= 300) throw errorFromStatus(code, parseStatus(text), text, request);
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new UnavailableError(`${request.method} ${request.path}: the server answered ${code} with a body that is not JSON`, { cause: error });
    }
  }

  /** Opens a streaming GET (a watch). Resolves with the 200 response; any other answer is a typed error. */
  async stream(request: TransportRequest, signal: AbortSignal | undefined): Promise<IncomingMessage> {
    await this.throttle(request);
    const response = await this.send(request, signal, undefined);
    const code = response.statusCode ?? 0;
    if (code === 401) this.options.onUnauthorized?.();
    if (code !== 200) {
      const text = await readText(response, request);
      // The caller (the forwarder's stream) backs off; the paused bucket holds its retry back.
      if (code === 429) this.noteThrottled(response, text);
      throw errorFromStatus(code, parseStatus(text), text, request);
    }
    response.socket?.setKeepAlive(true, 30_000);
    return response;
  }

  /** Waits for a token of the cluster's rate limit; ThrottledError when the wait would outlast the invocation. */
  private async throttle(request: TransportRequest): Promise<void> {
    const limiter = this.options.rateLimiter;
    if (!limiter) return;
    if (this.options.priority?.() === 'sweep') return this.throttleSweep(limiter, request);
    const waitMs = limiter.reserve();
    if (waitMs <= 0) return;
    if (!this.fitsInInvocation(waitMs)) {
      limiter.cancel();
      const { qps, burst } = limiter.settings;
      throw new ThrottledError(`${request.method} ${request.path}: the client-side rate limit (${qps} QPS, burst ${burst}) needs a ${waitMs} ms wait, more than this invocation has left`);
    }
    await (this.options.sleep ?? waitFor)(waitMs);
  }

  /** A sweep's request asks for a token until it gets one, waiting out the refill between asks. */
  private async throttleSweep(limiter: TokenBucket, request: TransportRequest): Promise<void> {
    for (let waitMs = limiter.tryTakeForSweep(); waitMs > 0; waitMs = limiter.tryTakeForSweep()) {
      if (!this.fitsInInvocation(waitMs)) {
        const { qps, burst } = limiter.settings;
        throw new ThrottledError(`${request.method} ${request.path}: the client-side rate limit (${qps} QPS, burst ${burst}) leaves this sweep no token within the time this invocation has left`);
      }
      await (this.options.sleep ?? waitFor)(waitMs);
    }
  }

  /** Pauses the cluster's bucket for the 429's Retry-After; returns that wait in ms. */
  private noteThrottled(response: IncomingMessage, text: string): number {
    const now = (this.options.now ?? Date.now)();
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], parseStatus(text), now);
    this.options.rateLimiter?.pauseUntil(now + Math.min(retryAfterMs, MAX_RETRY_AFTER_WAIT_MS));
    return retryAfterMs;
  }

  private fitsInInvocation(waitMs: number): boolean {
    const remaining = this.options.remainingTimeMs?.();
    return remaining === undefined || waitMs <= remaining - THROTTLE_DEADLINE_MARGIN_MS;
  }

  private async send(request: TransportRequest, signal: AbortSignal | undefined, timeoutMs: number | undefined, retryOnReset = true): Promise<IncomingMessage> {
    const options = await this.requestOptions(request);
    const url = this.url(request);
    const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    if (body) {
      options.headers = { ...options.headers, 'Content-Type': request.contentType ?? 'application/json', 'Content-Length': body.length };
    }
    const module = url.protocol === 'https:' ? https : http;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = module.request(url, { ...options, method: request.method, signal });
      req.on('response', resolve);
      req.on('error', (error) => {
        // The server closed an idle kept-alive connection as this request went out on it:
        // the request never reached it. A read is sent again, once, on a new connection.
        if (retryOnReset && req.reusedSocket && request.method === 'GET' && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && !signal?.aborted) {
          resolve(this.send(request, signal, timeoutMs, false));
          return;
        }
        reject(errorFromTransport(error, request));
      });
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      }
      req.end(body);
    });
  }

  private record(request: TransportRequest, started: number, status: number | undefined, error: unknown): void {
    if (!this.options.onResponse) return;
    this.options.onResponse({
      method: request.method,
      url: this.url(request).toString(),
      ...(status === undefined ? {} : { status }),
      ...(error === undefined ? {} : { error: error instanceof Error ? error.message : String(error) }),
      elapsedMs: Date.now() - started,
    });
  }

  private url(request: TransportRequest): URL {
    const base = this.server.pathname.replace(/\/$/, '');
    const url = new URL(this.server.origin + base + request.path);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  private async requestOptions(request: TransportRequest): Promise<https.RequestOptions> {
    const options: ConnectionRequestOptions = { headers: {} };
    try {
      // Credentials are applied per request: exec plugins and token files rotate.
      await this.connection.applyTo(options);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new UnavailableError(`${request.method} ${request.path}: credentials: ${message}`, { cause: error });
    }
    options.headers = { ...options.headers, Accept: 'application/json', 'User-Agent': this.options.userAgent };
    options.agent = this.reusableAgent(options);
    return options;
  }

  /**
   * A connection may build a fresh agent on every call (client-node does), which would open
   * a connection (and a TLS handshake) per request. Unless the connection's agent must be
   * used (a proxy), keep one keep-alive agent with the TLS material of the first request.
   */
  private reusableAgent(options: https.RequestOptions): http.Agent | undefined {
    if (this.connection.providesAgent) return options.agent as http.Agent | undefined;
    if (!this.agent) {
      const tls = {
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        servername: options.servername,
        ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
      };
      this.agent =
        this.server.protocol === 'https:'
          ? new https.Agent({ keepAlive: true, maxSockets: 64, ...tls })
          : new http.Agent({ keepAlive: true, maxSockets: 64 });
    }
    return this.agent;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }
}

async function readText(response: IncomingMessage, request: TransportRequest): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response) chunks.push(chunk as Buffer);
  } catch (error) {
    throw errorFromTransport(error, request);
  }
  return Buffer.concat(chunks).toString('utf8');
}
