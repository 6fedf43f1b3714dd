import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { InvalidInputError, UnavailableError } from '../../errors';
import type { ClusterConnection, ConnectionRequestOptions } from './connection';
import { errorFromStatus, errorFromTransport, parseStatus } from './errors';

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

  /** Sends a request and parses the JSON answer; every failure is a typed error. */
  async request<T>(request: TransportRequest): Promise<T> {
    const started = Date.now();
    let response: IncomingMessage;
    let text: string;
    try {
      response = await this.send(request, undefined, this.options.requestTimeoutMs);
      text = await readText(response, request);
    } catch (error) {
      this.record(request, started, undefined, error);
      throw error;
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
    const response = await this.send(request, signal, undefined);
    const code = response.statusCode ?? 0;
    if (code === 401) this.options.onUnauthorized?.();
    if (code !== 200) {
      const text = await readText(response, request);
      throw errorFromStatus(code, parseStatus(text), text, request);
    }
    response.socket?.setKeepAlive(true, 30_000);
    return response;
  }

  private async send(request: TransportRequest, signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<IncomingMessage> {
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
      req.on('error', (error) => reject(errorFromTransport(error, request)));
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
