/**
 * Connections for registered clusters, as the functions build them: from a kubeconfig held
 * in a secret, from a resolved bearer token, or (locally) from a kubeconfig record or file.
 * Only static credentials are read — a token, a token file, a client certificate, basic
 * auth — so this needs neither @kubernetes/client-node nor anything it pulls in. Users that
 * run credential plugins (`exec`, `auth-provider`) are refused: a function has no plugin
 * binaries, and a record from the table must never make the process run a command.
 *
 * In deployed mode a record cannot point a function at a file on its host, at a plain-HTTP
 * server or at a server whose certificate goes unchecked, and kubeconfig records (credentials
 * in the table) and kubeconfig-file records (the operator's machine) are refused outright.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import { InvalidInputError } from '../../domain/errors';
import { parseYamlSubset, YamlSubsetError } from '../../domain/yaml-subset';
import type { ControlPlaneMode } from '../../ports/config';
import type { ClusterRecord } from '../../ports/store';
import type { ClusterConnection, ConnectionRequestOptions, ResolvedCredentials } from './connection';

/** What a connection may use: deployed mode refuses local-only records, files, plain HTTP and unchecked TLS. */
export interface ConnectionPolicy {
  mode: ControlPlaneMode;
  /** The function connecting; for a kubeconfig-file record it picks the context named after it. */
  functionName?: string;
}

/** A hand-built caller without a policy (tests, tools) is local, as an unset config mode is. */
const LOCAL_POLICY: ConnectionPolicy = { mode: 'local' };

/** What deployed records must use, for the refusal messages. */
export const DEPLOYED_CREDENTIALS_HINT =
  'register the cluster as {"kind": "secret"} (each function F reads <CLUSTER_SECRET_PREFIX><cluster-id>/F) or as an EKS record';

/** What to store instead of a credential plugin, for the refusal message. */
export const STATIC_CREDENTIALS_HINT =
  'store a kubeconfig whose user has a token (or tokenFile) or a client certificate (client-certificate-data and client-key-data), a secret holding {"token": ...}, or register the cluster as an EKS record';

type Document = Record<string, unknown>;

interface Named {
  name: string;
  body: Document;
}

interface TlsSettings {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  rejectUnauthorized?: false;
}

interface UserCredentials {
  token?: string;
  tokenFile?: string;
  auth?: string;
  impersonate?: string;
}

function isDocument(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads kubeconfig fields with messages that name the field, never its value (it may be a secret). */
class KubeconfigReader {
  constructor(
    private readonly clusterId: string,
    readonly mode: ControlPlaneMode,
  ) {}

  fail(message: string): never {
    throw new InvalidInputError(`cluster ${this.clusterId}: ${message}`);
  }

  string(document: Document, field: string, where: string): string | undefined {
    const value = document[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') this.fail(`${where}: "${field}" must be a string`);
    return value;
  }

  boolean(document: Document, field: string, where: string): boolean {
    const value = document[field];
    if (value === undefined || value === null) return false;
    if (typeof value !== 'boolean') this.fail(`${where}: "${field}" must be true or false`);
    return value;
  }

  /** `clusters`, `users` or `contexts`: a list of `{name, <item>: {...}}`. */
  entries(document: Document, list: string, item: string): Named[] {
    const value = document[list];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.fail(`the kubeconfig's "${list}" must be a list`);
    return value.map((entry: unknown, index) => {
      if (!isDocument(entry) || typeof entry.name !== 'string' || !entry.name) this.fail(`the kubeconfig's ${list}[${index}] has no name`);
      const body = entry[item] ?? {};
      if (!isDocument(body)) this.fail(`the kubeconfig's ${list}[${index}].${item} must be a mapping`);
      return { name: entry.name, body };
    });
  }

  /**
   * base64 `<field>-data`, else the file `<field>` (read now: TLS material is fixed for a
   * client's life). Deployed functions read no files: a path in a secret would let whoever
   * writes it make the function present whatever file its host holds.
   */
  material(document: Document, field: string, where: string): Buffer | undefined {
    const data = this.string(document, `${field}-data`, where);
    if (data !== undefined) return Buffer.from(data, 'base64');
    const file = this.string(document, field, where);
    if (file === undefined) return undefined;
    if (this.mode === 'deployed') this.fail(`${where}: ${field} names a file, and deployed functions read no files; put the file's base64 content in ${field}-data instead`);
    try {
      return readFileSync(file);
    } catch (error) {
      throw new InvalidInputError(`cluster ${this.clusterId}: ${where}: cannot read ${field} ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
  }
}

function parseDocument(clusterId: string, text: string): Document {
  let document: unknown;
  try {
    document = parseYamlSubset(text);
  } catch (error) {
    // No cause, and only the reader's own words, which name a line: the text holds credentials.
    const unsupported = error instanceof YamlSubsetError && error.unsupported;
    const where = error instanceof YamlSubsetError ? ` (${error.message})` : '';
    throw new InvalidInputError(`cluster ${clusterId}: the kubeconfig ${unsupported ? 'uses YAML that functions do not read' : 'is not valid YAML or JSON'}${where}`);
  }
  if (!isDocument(document)) throw new InvalidInputError(`cluster ${clusterId}: the kubeconfig is not a mapping`);
  return document;
}

function checkServer(reader: KubeconfigReader, server: string, where: string): string {
  let protocol: string | undefined;
  try {
    ({ protocol } = new URL(server));
  } catch {
    protocol = undefined;
  }
  if (reader.mode === 'deployed') {
    if (protocol === 'http:') reader.fail(`${where}: server "${server}" is plain HTTP, which deployed functions refuse (tokens would cross the network in clear); use the API server's https:// URL`);
    if (protocol !== 'https:') reader.fail(`${where}: server "${server}" must be an https:// URL`);
  } else if (protocol !== 'https:' && protocol !== 'http:') {
    reader.fail(`${where}: server "${server}" must be an https:// (or http://) URL`);
  }
  return server.replace(/\/$/, '');
}

function readUser(reader: KubeconfigReader, user: Named, where: string): { credentials: UserCredentials; cert?: Buffer; key?: Buffer } {
  const body = user.body;
  if (body.exec !== undefined && body.exec !== null) {
    const command = isDocument(body.exec) && typeof body.exec.command === 'string' ? ` (exec: ${body.exec.command})` : '';
    reader.fail(`${where} runs a credential plugin${command}; functions cannot run credential plugins: ${STATIC_CREDENTIALS_HINT}`);
  }
  if (body['auth-provider'] !== undefined && body['auth-provider'] !== null) {
    const provider = isDocument(body['auth-provider']) && typeof body['auth-provider'].name === 'string' ? ` (auth-provider: ${body['auth-provider'].name})` : '';
    reader.fail(`${where} uses an auth provider plugin${provider}; functions cannot run credential plugins: ${STATIC_CREDENTIALS_HINT}`);
  }
  const cert = reader.material(body, 'client-certificate', where);
  const key = reader.material(body, 'client-key', where);
  if ((cert === undefined) !== (key === undefined)) reader.fail(`${where}: a client certificate needs both client-certificate(-data) and client-key(-data)`);
  const token = reader.string(body, 'token', where);
  // kubectl spells it tokenFile; client-node reads token-file.
  const tokenFileField = reader.string(body, 'tokenFile', where) !== undefined ? 'tokenFile' : 'token-file';
  const tokenFile = reader.string(body, tokenFileField, where);
  if (tokenFile !== undefined && token === undefined && reader.mode === 'deployed') {
    reader.fail(`${where}: ${tokenFileField} names a file, and deployed functions read no files; put the token itself in "token" instead`);
  }
  const username = reader.string(body, 'username', where);
  const password = reader.string(body, 'password', where);
  const impersonate = reader.string(body, 'as', where);
  const credentials: UserCredentials = {
    ...(token === undefined ? {} : { token }),
    ...(token === undefined && tokenFile !== undefined ? { tokenFile } : {}),
    ...(username === undefined ? {} : { auth: `${username}:${password ?? ''}` }),
    ...(impersonate === undefined ? {} : { impersonate }),
  };
  return { credentials, ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
}

/**
 * A connection from a kubeconfig text: the named context, else the current one; its
 * cluster's server, CA (`certificate-authority-data` or `certificate-authority`),
 * `insecure-skip-tls-verify` and `tls-server-name`; its user's token, tokenFile (read again
 * for every request, as it rotates), client certificate, basic auth and `as`. Every problem
 * is an InvalidInputError naming the cluster; no message quotes a credential.
 */
export function connectionFromKubeconfigText(clusterId: string, text: string, contextName?: string, policy: ConnectionPolicy = LOCAL_POLICY): ClusterConnection {
  const reader: KubeconfigReader = new KubeconfigReader(clusterId, policy.mode);
  const document = parseDocument(clusterId, text);
  return connectionFromDocument(reader, document, contextName);
}

function connectionFromDocument(reader: KubeconfigReader, document: Document, contextName: string | undefined): ClusterConnection {
  const name = contextName || reader.string(document, 'current-context', 'the kubeconfig');
  if (!name) reader.fail('no usable kubeconfig: it has no current-context and the record names no context');
  const context = reader.entries(document, 'contexts', 'context').find((entry) => entry.name === name);
  if (!context) reader.fail(`context "${name}" does not exist`);
  const clusterName = reader.string(context.body, 'cluster', `context "${name}"`);
  const cluster = reader.entries(document, 'clusters', 'cluster').find((entry) => entry.name === clusterName);
  if (!cluster) reader.fail(`context "${name}" names a cluster that is not defined`);
  const clusterWhere = `cluster "${cluster.name}"`;
  const server = reader.string(cluster.body, 'server', clusterWhere);
  if (!server) reader.fail(`${clusterWhere} has no server`);
  if (reader.string(cluster.body, 'proxy-url', clusterWhere)) reader.fail(`${clusterWhere}: proxy-url is not supported for registered clusters; functions connect to the API server directly`);
  const ca = reader.material(cluster.body, 'certificate-authority', clusterWhere);
  const servername = reader.string(cluster.body, 'tls-server-name', clusterWhere);
  const skipTlsVerify = reader.boolean(cluster.body, 'insecure-skip-tls-verify', clusterWhere);
  if (skipTlsVerify && reader.mode === 'deployed') {
    reader.fail(`${clusterWhere}: insecure-skip-tls-verify is refused in deployed mode (anyone on the path could take the credentials); remove it and set certificate-authority-data to the API server's CA`);
  }

  const userName = reader.string(context.body, 'user', `context "${name}"`);
  let user: ReturnType<typeof readUser> = { credentials: {} };
  if (userName) {
    const entry = reader.entries(document, 'users', 'user').find((candidate) => candidate.name === userName);
    if (!entry) reader.fail(`context "${name}" names a user that is not defined`);
    user = readUser(reader, entry, `user "${userName}" of context "${name}"`);
  }
  const tls: TlsSettings = {
    ...(ca === undefined ? {} : { ca }),
    ...(user.cert === undefined ? {} : { cert: user.cert }),
    ...(user.key === undefined ? {} : { key: user.key }),
    ...(servername === undefined ? {} : { servername }),
    ...(skipTlsVerify ? { rejectUnauthorized: false as const } : {}),
  };
  return staticConnection(checkServer(reader, server, clusterWhere), tls, user.credentials);
}

function staticConnection(server: string, tls: TlsSettings, credentials: UserCredentials): ClusterConnection {
  const headers: OutgoingHttpHeaders = {};
  if (credentials.token !== undefined) headers.Authorization = `Bearer ${credentials.token}`;
  if (credentials.impersonate !== undefined) headers['Impersonate-User'] = credentials.impersonate;
  return {
    server,
    async applyTo(options: ConnectionRequestOptions): Promise<void> {
      Object.assign(options, tls);
      if (credentials.auth !== undefined) options.auth = credentials.auth;
      options.headers = { ...options.headers, ...headers };
      if (credentials.tokenFile !== undefined) {
        const token = (await readFile(credentials.tokenFile, 'utf8')).trim();
        if (token) options.headers.Authorization = `Bearer ${token}`;
      }
    },
  };
}

/**
 * The context a function uses in a kubeconfig file: the one named after the function when
 * the file has it (a per-function identity), else the record's, else the file's current one
 * (undefined here).
 */
export function kubeconfigFileContextFor(contextNames: readonly string[], recordContext: string | undefined, functionName: string | undefined): string | undefined {
  if (functionName !== undefined && contextNames.includes(functionName)) return functionName;
  return recordContext || undefined;
}

/**
 * Refuses records deployed functions must not use, each with what to register instead. A
 * kubeconfig record keeps credentials in the table, readable by every function and by anyone
 * who can read the table; a kubeconfig-file record names a file on the operator's machine.
 */
export function assertRecordAllowed(record: ClusterRecord, policy: ConnectionPolicy): void {
  if (policy.mode !== 'deployed') return;
  const { kind } = record.credentials;
  if (kind === 'kubeconfig') {
    throw new InvalidInputError(`cluster ${record.id}: kubeconfig records keep credentials in the table and are refused in deployed mode; ${DEPLOYED_CREDENTIALS_HINT}`);
  }
  if (kind === 'kubeconfig-file') {
    throw new InvalidInputError(`cluster ${record.id}: kubeconfig-file records name a file on the operator's machine and work only with npm start; ${DEPLOYED_CREDENTIALS_HINT}`);
  }
}

function readKubeconfigFile(record: ClusterRecord, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidInputError(`cluster ${record.id}: cannot read kubeconfig file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
  }
}

/**
 * The connection for a registered cluster, without @kubernetes/client-node. A kubeconfig
 * record is used as stored (with its context, if any); a kubeconfig-file record reads its
 * file now, with the context kubeconfigFileContextFor picks; a secret holding a kubeconfig
 * is read the same way. Secret and EKS records carry no credential themselves: the caller
 * resolves it (reads the secret, presigns the EKS token and caches it under its lifetime)
 * and passes it in `resolved`. A resolved token goes only to the resolved `server`, with
 * the resolved `caData`: the secret's own, or EKS DescribeCluster's. The record's `server`
 * and `caData` are never used for it, since whoever can write the table could otherwise
 * send a cluster's token to a host of theirs; a token without a server is refused.
 * `policy` defaults to local; deployed functions pass their mode (see assertRecordAllowed).
 */
export function connectionFromRecord(record: ClusterRecord, resolved: ResolvedCredentials = {}, policy: ConnectionPolicy = LOCAL_POLICY): ClusterConnection {
  assertRecordAllowed(record, policy);
  const { credentials } = record;
  const reader: KubeconfigReader = new KubeconfigReader(record.id, policy.mode);
  if (credentials.kind === 'kubeconfig-file') {
    const document = parseDocument(record.id, readKubeconfigFile(record, credentials.path));
    const names = reader.entries(document, 'contexts', 'context').map((entry) => entry.name);
    return connectionFromDocument(reader, document, kubeconfigFileContextFor(names, credentials.context, policy.functionName));
  }
  const kubeconfigText = credentials.kind === 'kubeconfig' ? credentials.kubeconfig : resolved.kubeconfig;
  if (kubeconfigText) return connectionFromDocument(reader, parseDocument(record.id, kubeconfigText), credentials.kind === 'kubeconfig' ? credentials.context : undefined);
  if (!resolved.token) {
    throw new InvalidInputError(`cluster ${record.id}: ${credentials.kind} credentials must be resolved to a token or a kubeconfig first`);
  }
  const { server, caData } = resolved;
  if (!server) {
    const source = credentials.kind === 'eks' ? 'the endpoint EKS DescribeCluster reports' : 'the server the secret names ("server", with its CA in "caData")';
    reader.fail(`the ${credentials.kind} credentials resolved to a token without a server; a token goes only to ${source}, never to the record's server`);
  }
  return staticConnection(checkServer(reader, server, `the ${credentials.kind} credentials`), caData ? { ca: Buffer.from(caData, 'base64') } : {}, { token: resolved.token });
}
