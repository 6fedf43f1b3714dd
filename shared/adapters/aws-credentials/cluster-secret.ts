/**
 * What a cluster secret may hold, and which secrets a cluster record may name. Parse
 * failures never quote the secret: messages end up in logs.
 */
import { parse as parseYaml } from 'yaml';
import { InvalidInputError } from '../../errors';
import type { ResolvedCredentials } from '../kubernetes/connection';

/** The two documented secret formats, for messages. */
export const CLUSTER_SECRET_FORMATS = 'a kubeconfig (YAML or JSON, static credentials) or JSON {"token": "...", "server"?: "https://...", "caData"?: "<base64 PEM>"}';

/** The secret's name: the record may hold a name or an ARN (`arn:aws:secretsmanager:<region>:<account>:secret:<name>-<suffix>`). */
export function secretNameOf(secretId: string): string {
  if (!secretId.startsWith('arn:')) return secretId;
  const parts = secretId.split(':');
  if (parts.length !== 7 || parts[2] !== 'secretsmanager' || parts[5] !== 'secret' || !parts[6]) {
    throw new InvalidInputError(`"${secretId}" is not a Secrets Manager secret ARN`);
  }
  return parts[6];
}

/**
 * Refuses secrets outside the deployment's cluster prefix (CLUSTER_SECRET_PREFIX, for example
 * `ome-pinning/prod/clusters/`): the functions' role may read only those, and a record must
 * not be able to point the control plane at any other secret in the account.
 */
export function assertSecretInPrefix(clusterId: string, secretId: string, prefix: string): void {
  if (!prefix) {
    throw new InvalidInputError(`cluster ${clusterId}: secret credentials are refused because CLUSTER_SECRET_PREFIX is not set`);
  }
  if (!secretNameOf(secretId).startsWith(prefix)) {
    throw new InvalidInputError(`cluster ${clusterId}: secret "${secretId}" is outside ${prefix}; store cluster secrets as ${prefix}<cluster-id>`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(clusterId: string, document: Record<string, unknown>, field: string): string | undefined {
  const value = document[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') throw new InvalidInputError(`cluster ${clusterId}: the secret's "${field}" must be a non-empty string`);
  return value;
}

/** Reads a cluster secret's text: either format becomes credentials for connectionFromRecord. */
export function parseClusterSecret(clusterId: string, text: string): ResolvedCredentials {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch {
    // No cause: the parser's message quotes the text.
    throw new InvalidInputError(`cluster ${clusterId}: the secret is neither JSON nor YAML; it must hold ${CLUSTER_SECRET_FORMATS}`);
  }
  if (isRecord(document) && 'token' in document) {
    const token = optionalString(clusterId, document, 'token');
    if (!token) throw new InvalidInputError(`cluster ${clusterId}: the secret's "token" is empty`);
    const server = optionalString(clusterId, document, 'server');
    const caData = optionalString(clusterId, document, 'caData');
    if (server !== undefined && !/^https?:\/\//.test(server)) throw new InvalidInputError(`cluster ${clusterId}: the secret's "server" must be a URL such as https://api.example:443`);
    return { token, ...(server === undefined ? {} : { server }), ...(caData === undefined ? {} : { caData }) };
  }
  if (isRecord(document) && Array.isArray(document.clusters)) return { kubeconfig: text };
  throw new InvalidInputError(`cluster ${clusterId}: the secret must hold ${CLUSTER_SECRET_FORMATS}`);
}
