/**
 * Local peers of the AWS metric sources analysis can use, for tests: CloudWatch's
 * GetMetricData (AWS JSON 1.0, as the SDK's CloudWatch client sends it) and Amazon Managed
 * Service for Prometheus' query API. Each checks every request's SigV4 signature the way
 * AWS does (the credential scope's key, date, region and service, the signed headers
 * including Host and the session token, the body's hash, the signing time within 5
 * minutes of the peer's clock) and answers 403 with AWS's error shape when it does not
 * hold, so a test sees what a wrongly signed request would get from AWS.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentials } from '../../shared/adapters/aws-credentials/eks-token';
import { signableQuery } from '../../shared/adapters/aws-metrics/signed-fetch';

/** One datapoint: epoch seconds and value. */
export type Datapoint = readonly [number, number];

/** A series a query answers with. */
export interface PeerSeries {
  readonly label: string;
  readonly points: readonly Datapoint[];
}

export interface PeerRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
  /** Whether the signature held. */
  readonly signatureValid: boolean;
}

export interface AwsMetricsPeer {
  readonly address: string;
  readonly requests: PeerRequest[];
  close(): Promise<void>;
}

export interface PeerOptions {
  /** The credentials the peer accepts (the function's role in the test). */
  readonly credentials: AwsCredentials;
  readonly region: string;
  /** The peer's clock, for the signing-time check. */
  readonly now?: () => Date;
}

const Sha256 = Hash.bind(null, 'sha256');
const MAX_SKEW_MS = 5 * 60_000;

/** A GetMetricData peer: `series(expression)` gives the series of each query, cut to the asked window. */
export function startCloudWatchPeer(options: PeerOptions & { series(expression: string): readonly PeerSeries[] }): Promise<AwsMetricsPeer> {
  return startPeer(options, 'monitoring', (request, response) => {
    if (request.headers['x-amz-target'] !== 'GraniteServiceVersion20100801.GetMetricData' || request.headers['content-type'] !== 'application/x-amz-json-1.0') {
      return awsError(response, 400, 'UnknownOperationException', 'only GetMetricData over AWS JSON 1.0 is served here');
    }
    const input = JSON.parse(request.body) as { MetricDataQueries: { Id: string; Expression: string; Period: number }[]; StartTime: number; EndTime: number };
    const MetricDataResults = input.MetricDataQueries.flatMap((query) =>
      options.series(query.Expression).map((series) => {
        const points = series.points.filter(([at]) => at >= input.StartTime && at < input.EndTime).sort((a, b) => b[0] - a[0]);
        return { Id: query.Id, Label: series.label, Timestamps: points.map(([at]) => at), Values: points.map(([, value]) => value), StatusCode: 'Complete' };
      }),
    );
    response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
    response.end(JSON.stringify({ MetricDataResults, Messages: [] }));
  });
}

/** A Managed Prometheus workspace at `/workspaces/<workspace>`: `values(query)` gives one series per value. */
export function startAmpPeer(options: PeerOptions & { workspace: string; values(query: string): readonly string[] }): Promise<AwsMetricsPeer> {
  return startPeer(options, 'aps', (request, response) => {
    if (request.path !== `/workspaces/${options.workspace}/api/v1/query`) return awsError(response, 404, 'ResourceNotFoundException', `no such path ${request.path}`);
    const query = new URLSearchParams(request.body).get('query') ?? '';
    const result = options.values(query).map((value, i) => ({ metric: { pod: `pod-${i}` }, value: [1700000000, value] }));
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
}

type Serve = (request: PeerRequest, response: ServerResponse) => void;

async function startPeer(options: PeerOptions, service: string, serve: Serve): Promise<AwsMetricsPeer> {
  const requests: PeerRequest[] = [];
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      void verifySignature(incoming, body, options, service).then((problem) => {
        const url = new URL(incoming.url ?? '/', 'http://peer');
        const request = { path: url.pathname, headers: incoming.headers, body, signatureValid: problem === undefined };
        requests.push(request);
        if (problem) return awsError(response, 403, problem.code, problem.message);
        serve(request, response);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Why a request's signature does not hold, as AWS names it, or undefined when it does. */
async function verifySignature(incoming: IncomingMessage, body: string, options: PeerOptions, service: string): Promise<{ code: string; message: string } | undefined> {
  const authorization = String(incoming.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return { code: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, keyId, , region, signedService, signedHeaders] = match;
  if (keyId !== options.credentials.accessKeyId) return { code: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (region !== options.region || signedService !== service) {
    return { code: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service: ${options.region}/${service}` };
  }
  const amzDate = String(incoming.headers['x-amz-date'] ?? '');
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const now = options.now?.() ?? new Date();
  if (Number.isNaN(signingDate.getTime()) || Math.abs(now.getTime() - signingDate.getTime()) > MAX_SKEW_MS) {
    return { code: 'InvalidSignatureException', message: 'Signature expired or not yet current' };
  }
  if (options.credentials.sessionToken && incoming.headers['x-amz-security-token'] !== options.credentials.sessionToken) {
    return { code: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  const names = (signedHeaders ?? '').split(';');
  if (!names.includes('host')) return { code: 'InvalidSignatureException', message: "'Host' must be a 'SignedHeader' in the AWS Authorization." };
  const url = new URL(incoming.url ?? '/', 'http://peer');
  const query = signableQuery(url);
  const headers = Object.fromEntries(names.map((name) => [name, String(incoming.headers[name] ?? '')]));
  const signer = new SignatureV4({ service, region: options.region, credentials: options.credentials, sha256: Sha256, uriEscapePath: true });
  const expected = await signer.sign(
    { method: incoming.method ?? 'GET', protocol: 'https:', hostname: headers.host ?? '', path: url.pathname, query, headers, body },
    { signingDate },
  );
  return expected.headers.authorization === authorization
    ? undefined
    : { code: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
}

function awsError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-ErrorType': code });
  response.end(JSON.stringify({ __type: `com.amazonaws.peer#${code}`, message }));
}
