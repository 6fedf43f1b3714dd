/**
 * What a cluster secret may hold, and which secret a function reads for a cluster. Parse
 * failures never quote the secret: messages end up in logs.
 */
import { InvalidInputError } from '../../domain/errors';
import { parseYamlSubset, YamlSubsetError } from '../../domain/yaml-subset';
import type { ResolvedCredentials } from '../kubernetes/connection';

/** The two documented secret formats, for messages. */
export const CLUSTER_SECRET_FORMATS = 'a kubeconfig (YAML or JSON, static credentials) or JSON {"token": "...", "server": "https://...", "caData"?: "<base64 PEM>"}';

/** How to fix a token secret without a server, for the refusal. */
export const SECRET_SERVER_HINT =
  'put the API server\'s URL in the secret as "server" and its CA as "caData" (base64 PEM), as docs/operations.md ("Secret records") shows; the registry record\'s server is never used for a token from a secret';

/** A cluster id that can be one segment of a secret name (Secrets Manager's characters, no `/`). */
const SECRET_SEGMENT = /^[A-Za-z0-9_+=.@-]+$/;

/**
 * The secret function `functionName` reads for cluster `clusterId`:
 * `<CLUSTER_SECRET_PREFIX><cluster-id>/<function>`. One secret per function and cluster, so
 * each function's role can be granted exactly its own (`<prefix>*\/<function>-??????`) and no
 * credential is shared between functions. The name is derived, never read from the record:
 * a rewritten record cannot point a function at another secret.
 */
export function clusterSecretName(clusterId: string, functionName: string | undefined, prefix: string): string {
  if (!prefix) {
    throw new InvalidInputError(`cluster ${clusterId}: secret credentials are refused because CLUSTER_SECRET_PREFIX is not set`);
  }
  if (!functionName) {
    throw new InvalidInputError(`cluster ${clusterId}: secret credentials need the function's name (POWERTOOLS_SERVICE_NAME) to pick its secret ${prefix}${clusterId}/<function>`);
  }
  if (!SECRET_SEGMENT.test(clusterId)) {
    throw new InvalidInputError(`cluster ${clusterId}: the id cannot be part of a secret name; secret records need an id of letters, digits and _+=.@-`);
  }
  return `${prefix}${clusterId}/${functionName}`;
}

/**
 * Records written before secrets were per function name one secret (`secretArn`) for every
 * function. That secret would be readable by all of them, so it is refused with the steps
 * to move to per-function secrets.
 */
export function assertNoSharedSecret(clusterId: string, credentials: { secretArn?: unknown }, prefix: string): void {
  if (credentials.secretArn === undefined) return;
  throw new InvalidInputError(
    `cluster ${clusterId}: the record names one secret (secretArn ${JSON.stringify(credentials.secretArn)}) for every function, which is no longer accepted; ` +
      `store a copy of the credentials for each function F as ${prefix || '<CLUSTER_SECRET_PREFIX>'}${clusterId}/F and register the cluster again as {"kind": "secret"} (docs/operations.md, "Registering a cluster")`,
  );
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

/**
 * Reads a cluster secret's text: either format becomes credentials for connectionFromRecord.
 * A token secret must name its server: the token goes only where the secret says, never
 * to the registry record's server, which whoever can write the table could point at a host
 * of theirs. The CA, when the server's certificate is not publicly trusted, comes from the
 * secret too.
 */
export function parseClusterSecret(clusterId: string, text: string): ResolvedCredentials {
  let document: unknown;
  try {
    document = parseYamlSubset(text);
  } catch (error) {
    // No cause, and only the reader's own words, which name a line: the text holds credentials.
    const unsupported = error instanceof YamlSubsetError && error.unsupported;
    const where = error instanceof YamlSubsetError ? ` (${error.message})` : '';
    throw new InvalidInputError(`cluster ${clusterId}: the secret ${unsupported ? 'uses YAML that functions do not read' : 'is neither JSON nor YAML'}${where}; it must hold ${CLUSTER_SECRET_FORMATS}`);
  }
  if (isRecord(document) && 'token' in document) {
    const token = optionalString(clusterId, document, 'token');
    if (!token) throw new InvalidInputError(`cluster ${clusterId}: the secret's "token" is empty`);
    const server = optionalString(clusterId, document, 'server');
    const caData = optionalString(clusterId, document, 'caData');
    if (server === undefined) throw new InvalidInputError(`cluster ${clusterId}: the secret holds a token but no "server"; ${SECRET_SERVER_HINT}`);
    if (!/^https?:\/\//.test(server)) throw new InvalidInputError(`cluster ${clusterId}: the secret's "server" must be a URL such as https://api.example:443`);
    return { token, server, ...(caData === undefined ? {} : { caData }) };
  }
  if (isRecord(document) && Array.isArray(document.clusters)) return { kubeconfig: text };
  throw new InvalidInputError(`cluster ${clusterId}: the secret must hold ${CLUSTER_SECRET_FORMATS}`);
}
