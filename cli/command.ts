/**
 * The shape of one `kubectl ome` command. cli/app.ts keeps the table of commands; a command
 * module exports its entries and the table lists them, so new groups (`admin cluster …`)
 * need one line there. A command parses and prints only; the work is a function taking a
 * narrow client, tested with fakes and string buffers.
 */
import type { FlagSpec, ParsedArgs } from './args';
import type { BuildInfo } from './build-info';
import type { ClusterAdminRegistry } from './admin/cluster-onboarding';
import type { FleetAccess } from './admin/fleet';
import type { CliClusterClient, CliIO, CommandEnv } from './env';
import type { ClusterClient } from '../shared/ports/cluster';
import type { ClusterRecord } from '../shared/ports/store';

/** kubectl's connection flags, as the user gave them. */
export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  server?: string;
  token?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
  /** `--as`: the user to impersonate. */
  impersonateUser?: string;
  /** `--as-group`, in order. */
  impersonateGroups?: string[];
  requestTimeoutMs: number;
  /** `-v`: 6 or more logs each API request that failed, with its status, on stderr. */
  verbosity: number;
}

export interface Connection {
  client: CliClusterClient;
  contextName: string;
  /** The namespace the kubeconfig context names, if any. */
  contextNamespace?: string;
  /** The whole client, for `admin cluster`, which installs and removes objects. */
  admin?: Pick<ClusterClient, 'get' | 'create' | 'replace' | 'delete'>;
  /** The API server's URL and base64 PEM CA, as the kubeconfig names them. */
  server?: string;
  caData?: string;
  /** The kubeconfig file in use, when it is one file. */
  kubeconfigPath?: string;
}

/** Where the registry table is: the same settings the functions read (TABLE_NAME, DYNAMODB_ENDPOINT, AWS_REGION). */
export interface RegistryOptions {
  tableName: string;
  region: string;
  endpoint?: string;
}

/** The world as `main` wires it; tests pass fakes. */
export interface AppDeps {
  io: CliIO;
  connect(options: ConnectOptions): Promise<Connection>;
  now(): Date;
  newRequestId(): string;
  sleep(ms: number): Promise<void>;
  /** The plugin's version and commit; `main` passes what the build baked in. */
  buildInfo?: BuildInfo;
  /** The environment, read once by `main` (the registry table, AWS settings). */
  environment?: Record<string, string | undefined>;
  /** Opens the registry table for `admin cluster`. */
  openRegistry?(options: RegistryOptions): Promise<ClusterAdminRegistry>;
  /** Reads a file the user named (webhook key, CA). */
  readFile?(path: string): Promise<Buffer>;
  /** The plane's table, for `admin fleet`; absent where the CLI has none. */
  openFleet?(): Promise<FleetAccess>;
  /** Resolves when a long-running command (`dashboard`) should stop; default SIGINT or SIGTERM. */
  interrupted?(): Promise<unknown>;
  /** A reader for a registered cluster from its record, as the local plane connects (`dashboard`). */
  openRecordReader?(record: ClusterRecord, requestTimeoutMs: number): Promise<Pick<ClusterClient, 'list'>>;
}

/** What a command gets when it runs. */
export interface Invocation {
  args: ParsedArgs;
  /** The words after the command's own, flags left out. */
  operands: string[];
  deps: AppDeps;
  /** Connects with the global flags, for commands that reach the cluster. */
  connect(): Promise<{ env: CommandEnv; namespace: string; connection: Connection }>;
  /** Connects with the global flags and these in place of theirs (another context). */
  connectWith(overrides: Partial<ConnectOptions>): Promise<Connection>;
}

export interface Command {
  /** The command words, `runtime sync`. */
  path: string;
  summary: string;
  usage: string;
  description: string;
  flags: FlagSpec[];
  /** What completion offers for the operands: InferenceService names, or registered cluster ids. */
  operand?: 'inferenceservice' | 'cluster';
  /** Left out of help and completion. */
  hidden?: boolean;
  run(invocation: Invocation): Promise<number>;
}
