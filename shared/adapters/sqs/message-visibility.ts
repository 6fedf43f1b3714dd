/**
 * SQS `ChangeMessageVisibility` for the message a hint handler is answering: one signed
 * POST in SQS's AWS JSON 1.0 protocol (`X-Amz-Target: AmazonSQS.ChangeMessageVisibility`),
 * made with the same Signature V4 signer the EKS tokens use, so no SQS client package is
 * bundled for this single call. With an endpoint override (the local bus) the queue URL is
 * `<endpoint>/<account>/<queue>`, as SQS's own URLs are on their host.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { ControlPlaneError, InvalidInputError } from '../../errors';
import type { AwsCredentials, AwsCredentialsProvider } from '../aws-credentials/eks-token';

/** SQS refuses a visibility timeout above 12 hours. */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
const TARGET = 'AmazonSQS.ChangeMessageVisibility';
const Sha256 = Hash.bind(null, 'sha256');

/** Sets one received message's visibility timeout, counted from now. */
export type ChangeMessageVisibility = (message: { queueArn: string; receiptHandle: string }, visibilityTimeoutSeconds: number) => Promise<void>;

export interface SqsVisibilityOptions {
  /** Overrides `https://sqs.<region>.amazonaws.com` (the local bus). */
  endpoint?: string;
  credentials?: AwsCredentials | AwsCredentialsProvider;
  fetch?: typeof fetch;
}

/** The queue's region, account and name from its ARN (`arn:aws:sqs:<region>:<account>:<name>`). */
export function parseQueueArn(arn: string): { region: string; accountId: string; name: string } {
  const [prefix, , service, region, accountId, name] = arn.split(':');
  if (prefix !== 'arn' || service !== 'sqs' || !region || !accountId || !name) throw new InvalidInputError(`not an SQS queue ARN: ${arn}`);
  return { region, accountId, name };
}

/** The queue URL SQS expects for `arn`, on `endpoint` when given. */
export function queueUrlOf(arn: string, endpoint?: string): string {
  const { region, accountId, name } = parseQueueArn(arn);
  const base = endpoint?.replace(/\/+$/, '') ?? `https://sqs.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
  return `${base}/${accountId}/${name}`;
}

/** The call failed; the hint is still reported for redelivery, only after the queue's own timeout. */
export class ChangeVisibilityError extends ControlPlaneError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retryable: true, ...(options?.cause === undefined ? {} : { cause: options.cause }) });
    this.name = 'ChangeVisibilityError';
  }
}

/** A `ChangeMessageVisibility` over HTTP(S), signed with the function's role (the default credential chain). */
export function createSqsMessageVisibility(options: SqsVisibilityOptions = {}): ChangeMessageVisibility {
  const credentials = options.credentials ?? defaultProvider();
  const send = options.fetch ?? fetch;
  return async (message, seconds) => {
    const { region } = parseQueueArn(message.queueArn);
    const queueUrl = queueUrlOf(message.queueArn, options.endpoint);
    const url = new URL(options.endpoint ?? queueUrl);
    const body = JSON.stringify({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle, VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_TIMEOUT_SECONDS, Math.round(seconds))) });
    const signer = new SignatureV4({ service: 'sqs', region, credentials, sha256: Sha256, uriEscapePath: true });
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: '/',
      headers: { host: url.host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': TARGET },
      body,
    });
    let response: Response;
    try {
      // fetch sets the Host header itself (the signed one, url.host).
      const { host: _host, ...headers } = signed.headers;
      response = await send(`${url.protocol}//${url.host}/`, { method: 'POST', headers, body });
    } catch (error) {
      throw new ChangeVisibilityError(`ChangeMessageVisibility on ${queueUrl} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      throw new ChangeVisibilityError(`ChangeMessageVisibility on ${queueUrl} answered ${response.status}: ${text.slice(0, 300)}`);
    }
  };
}
