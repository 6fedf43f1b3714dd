/**
 * An IAM-enforcing HTTP proxy in front of DynamoDB Local, which enforces no IAM at all. Every
 * SDK request is SigV4-signed and names its access key id (`Credential=<akid>/<date>/<region>/…`
 * in the Authorization header); the proxy maps the key to an identity (a function's role from
 * serverless.yml), evaluates the call the way IAM does (see `policy.ts`, `dynamodb-request.ts`)
 * and either answers DynamoDB's `AccessDeniedException` or forwards the bytes unchanged.
 * Signatures are not verified: this proves policies, not credentials.
 */
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { DYNAMODB_TARGET_PREFIX, authorizationRequestsFor } from './dynamodb-request';
import { evaluatePolicy } from './policy';
import type { AuthorizationRequest, PolicyStatement } from './policy';
import type { TemplateRoles } from './template-roles';

export interface IamIdentity {
  accessKeyId: string;
  /** Shown in denials, as AWS does: for a role, its assumed-role session ARN. */
  principalArn: string;
  statements: PolicyStatement[];
}

export interface DynamoIamProxyOptions {
  /** DynamoDB Local's endpoint, `http://127.0.0.1:<port>`. */
  upstream: string;
  identities: IamIdentity[];
  accountId: string;
  /** The table's partition key attribute. Default `pk`. */
  partitionKey?: string;
  /** Default: any free port on 127.0.0.1. */
  port?: number;
}

/** One evaluated call, kept so tests can see what was decided. */
export interface ProxyDecision {
  accessKeyId: string;
  operation: string;
  requests: AuthorizationRequest[];
  allowed: boolean;
}

export interface DynamoIamProxy {
  endpoint: string;
  decisions: ProxyDecision[];
  close(): Promise<void>;
}

/** One identity per function, its key id given by `accessKeyIdOf`, its policy its role's statements. */
export function identitiesFromTemplate(roles: TemplateRoles, accessKeyIdOf: (functionName: string) => string): IamIdentity[] {
  return [...roles.functions.values()].map((role) => ({
    accessKeyId: accessKeyIdOf(role.functionName),
    principalArn: `arn:${roles.partition}:sts::${roles.accountId}:assumed-role/${role.roleName}/${roles.service}-${roles.stage}-${role.functionName}`,
    statements: role.statements,
  }));
}

/** The access key id and region of a SigV4 Authorization header. */
export function parseSigV4Credential(authorization: string | undefined): { accessKeyId: string; region: string } | undefined {
  const match = /Credential=([^/,\s]+)\/\d{8}\/([^/,\s]+)\/[^/,\s]+\/aws4_request/.exec(authorization ?? '');
  return match ? { accessKeyId: match[1] as string, region: match[2] as string } : undefined;
}

function answerError(response: ServerResponse, type: string, message: string): void {
  const body = JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message });
  response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body), 'x-amzn-requestid': 'local-iam-proxy' });
  response.end(body);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

function forward(upstream: URL, request: IncomingMessage, body: Buffer, response: ServerResponse): void {
  const headers = { ...request.headers, host: upstream.host, 'content-length': String(body.length) };
  const outgoing = httpRequest({ hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers }, (reply) => {
    response.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(response);
  });
  outgoing.once('error', (error) => {
    response.writeHead(502, { 'content-type': 'text/plain' });
    response.end(`local IAM proxy: DynamoDB Local did not answer: ${error.message}`);
  });
  outgoing.end(body);
}

/** Starts the proxy; point the SDK's `endpoint` at `endpoint` and give each identity its key id. */
export async function startDynamoIamProxy(options: DynamoIamProxyOptions): Promise<DynamoIamProxy> {
  const upstream = new URL(options.upstream);
  const identities = new Map(options.identities.map((identity) => [identity.accessKeyId, identity]));
  const decisions: ProxyDecision[] = [];

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request);
    const credential = parseSigV4Credential(request.headers.authorization);
    if (credential === undefined) return answerError(response, 'MissingAuthenticationTokenException', 'Request is missing Authentication Token');
    const identity = identities.get(credential.accessKeyId);
    if (identity === undefined) return answerError(response, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    const target = String(request.headers['x-amz-target'] ?? '');
    if (!target.startsWith(DYNAMODB_TARGET_PREFIX)) return answerError(response, 'UnknownOperationException', `unknown operation ${JSON.stringify(target)}`);
    const operation = target.slice(DYNAMODB_TARGET_PREFIX.length);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8') || '{}');
    } catch {
      return answerError(response, 'SerializationException', 'the request body is not JSON');
    }
    const requests = authorizationRequestsFor(operation, parsed as Parameters<typeof authorizationRequestsFor>[1], {
      region: credential.region,
      accountId: options.accountId,
      partitionKey: options.partitionKey ?? 'pk',
    });
    for (const authorization of requests) {
      const decision = evaluatePolicy(identity.statements, authorization);
      if (decision.decision === 'allow') continue;
      decisions.push({ accessKeyId: credential.accessKeyId, operation, requests, allowed: false });
      const because =
        decision.decision === 'explicit-deny'
          ? 'with an explicit deny in an identity-based policy'
          : `because no identity-based policy allows the ${authorization.action} action`;
      return answerError(response, 'AccessDeniedException', `User: ${identity.principalArn} is not authorized to perform: ${authorization.action} on resource: ${authorization.resource} ${because}`);
    }
    decisions.push({ accessKeyId: credential.accessKeyId, operation, requests, allowed: true });
    forward(upstream, request, body, response);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answerError(response, 'InternalFailure', `local IAM proxy: ${error instanceof Error ? error.message : String(error)}`);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    decisions,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
