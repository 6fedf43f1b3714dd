/**
 * The plugin's command table: parses the arguments, connects only when a command needs the
 * cluster, runs the command and turns failures into `error: <message>` and an exit code.
 * Each entry is a Command (cli/command.ts); a group of commands lives in its own module and
 * is listed here.
 */
import {
  booleanFlag,
  formatFlagHelp,
  GLOBAL_FLAGS,
  parseArgs,
  parseDurationFlag,
  stringFlag,
  stringsFlag,
  type FlagSpec,
  type ParsedArgs,
} from './args';
import { isFleetCommand, runFleetApp } from './admin/fleet';
import { ADMIN_ANALYSIS_SECRETS_COMMANDS } from './admin/analysis-secrets';
import { ADMIN_CLUSTER_COMMANDS, openClusterRegistry } from './admin/cluster';
import { DASHBOARD_COMMAND } from './dashboard/command';
import { readBuildInfo } from './build-info';
import type { AppDeps, Command, ConnectOptions, Invocation } from './command';
import { completeWords, formatCompletion, type CompletionSource } from './completion';
import type { CommandEnv } from './env';
import { CliError } from './errors';
import { parseDryRun } from './guarded';
import { resolveNamespace } from './isvc';
import { parseOutputFormat } from './output';
import { InferenceServices } from './resources';
import { runRolloutExplain } from './rollout/explain';
import { runRolloutPromote } from './rollout/promote';
import { runRolloutRepin } from './rollout/repin';
import { runReportingErrors } from './run';
import { runRuntimeEffective } from './runtime/effective';
import { runRuntimeHistory } from './runtime/history';
import { runRuntimeSync } from './runtime/sync';
import { runVersion, versionReport } from './version';
import { DEFAULT_POLL_INTERVAL_MS, DEFAULT_WAIT_TIMEOUT_MS, RUNTIME_SYNC_ACKNOWLEDGED, runWait } from './wait';
import { Resources } from '../shared/domain/model/resources';
import { DEFAULT_OME_NAMESPACE } from '../shared/domain/vocabulary';

export type { AppDeps, Command, Connection, ConnectOptions } from './command';

/** The command words of the hidden entry point `kubectl_complete-ome` calls. */
export const COMPLETE_COMMAND = '__complete';

/** A command on the one InferenceService its only operand names. */
function onInferenceService(
  spec: Omit<Command, 'run' | 'operand'> & { run(env: CommandEnv, args: ParsedArgs, target: { name: string; namespace: string }): Promise<number> },
): Command {
  const { run, ...rest } = spec;
  return {
    ...rest,
    operand: 'inferenceservice',
    async run(invocation) {
      if (invocation.operands.length !== 1) {
        throw new CliError(`exactly one InferenceService name is required; see "kubectl ome ${spec.path} --help"`);
      }
      const { env, namespace } = await invocation.connect();
      return run(env, invocation.args, { name: invocation.operands[0] as string, namespace });
    },
  };
}

const OUTPUT: FlagSpec = { name: 'output', short: 'o', type: 'string', description: 'Output format: table, wide, json or yaml', default: 'table', values: ['table', 'wide', 'json', 'yaml'] };
const OME_NAMESPACE: FlagSpec = { name: 'ome-namespace', type: 'string', description: 'Namespace where OME keeps runtime revisions', default: DEFAULT_OME_NAMESPACE };
const DRY_RUN: FlagSpec = { name: 'dry-run', type: 'string', description: 'Dry-run mode: none, client or server (server sends dryRun=All)', default: 'none', values: ['none', 'client', 'server'] };
const YES: FlagSpec = { name: 'yes', type: 'boolean', description: 'Confirm the exact preview without an interactive prompt' };
const OVERRIDE_ANALYSIS: FlagSpec = { name: 'override-analysis', type: 'boolean', description: "Pass the current step's analysis gate instead of a manual gate; requires --yes" };

const WAIT: FlagSpec = { name: 'wait', type: 'boolean', description: 'After applying, wait until OME acknowledges the sync, as "kubectl ome wait" does (same exit codes)' };
const WAIT_TIMEOUT: FlagSpec = { name: 'timeout', type: 'string', description: 'Positive wait timeout, at most 24h', default: '1m0s' };
const POLL_INTERVAL: FlagSpec = { name: 'poll-interval', type: 'string', description: 'How often to check', default: '5s' };

const omeNamespaceOf = (args: ParsedArgs): string => stringFlag(args, 'ome-namespace') || DEFAULT_OME_NAMESPACE;
const outputOf = (args: ParsedArgs) => parseOutputFormat(stringFlag(args, 'output'));
const guardedOf = (args: ParsedArgs) => ({ dryRun: parseDryRun(stringFlag(args, 'dry-run')), yes: booleanFlag(args, 'yes'), output: outputOf(args) });

const EFFECTIVE = {
  summary: 'Show the runtime an InferenceService uses, and the revision it is pinned to',
  usage: 'kubectl ome runtime effective INFERENCESERVICE [flags]',
  description:
    'Shows the Live view (the runtime as defined now) and the Active view (the pinned revision, or the live\nruntime when not pinned), with the pin, the runtime sync request, the RuntimeDrifted condition and\nhow the live and active hashes compare. "runtime show" is an alias.',
  flags: [OME_NAMESPACE, OUTPUT],
  run: (env: CommandEnv, args: ParsedArgs, target: { name: string; namespace: string }) =>
    runRuntimeEffective(env, { ...target, omeNamespace: omeNamespaceOf(args), output: outputOf(args) }),
};

export const COMMANDS: Command[] = [
  onInferenceService({
    path: 'runtime sync',
    summary: 'Alpha: roll a pinned InferenceService forward to its runtime\'s live spec',
    usage: 'kubectl ome runtime sync INFERENCESERVICE [--wait [--timeout=DURATION]] [flags]',
    description:
      'Sets ome.io/runtime-sync to cli-runtime-sync-<uuid> after checking that rolling forward is safe: a managed\npin that drifted with RevisionMismatch, no earlier token waiting, no rollout in progress. Previews the\nchange on stderr and asks "Confirm this exact action? [y/N]" unless --yes. Prints the request ID to pass\nto "kubectl ome wait --for=runtime-sync=acknowledged"; --wait does that wait itself.',
    flags: [DRY_RUN, OME_NAMESPACE, OUTPUT, YES, WAIT, WAIT_TIMEOUT, POLL_INTERVAL],
    run: runSyncThenWait,
  }),
  onInferenceService({
    path: 'runtime history',
    summary: 'List the revisions of an InferenceService\'s runtime, newest first',
    usage: 'kubectl ome runtime history INFERENCESERVICE [flags]',
    description:
      'Lists the ControllerRevisions labeled with the runtime\'s name in the OME namespace, newest first. ROLES\nmarks A (active), Q (spec.runtime.revision), R (status.pinnedRevisionName) and H (listed). Use -o wide for\nthe full names that spec.runtime.revision takes.',
    flags: [OME_NAMESPACE, OUTPUT],
    run: (env, args, target) => runRuntimeHistory(env, { ...target, omeNamespace: omeNamespaceOf(args), output: outputOf(args) }),
  }),
  onInferenceService({ path: 'runtime effective', ...EFFECTIVE }),
  onInferenceService({ path: 'runtime show', ...EFFECTIVE, usage: 'kubectl ome runtime show INFERENCESERVICE [flags]' }),
  onInferenceService({
    path: 'rollout explain',
    summary: 'Show the declared, live and pinned rollout plans, and what holds the rollout',
    usage: 'kubectl ome rollout explain INFERENCESERVICE [flags]',
    description: 'Prints the Declared, Live and Effective views of the rollout plan under VIEW, ITEM and DETAIL.',
    flags: [OUTPUT],
    run: (env, args, target) => runRolloutExplain(env, { ...target, output: outputOf(args) }),
  }),
  onInferenceService({
    path: 'rollout repin',
    summary: 'Alpha: move the active rollout run onto the current plan',
    usage: 'kubectl ome rollout repin INFERENCESERVICE [flags]',
    description:
      'Sets ome.io/rollout-repin to the digest of the current plan after checking that a repin is safe. Previews\nthe change on stderr and asks "Confirm this exact action? [y/N]" unless --yes. Exits 1 on a refusal and 3\nwhen the InferenceService changed after it was read.',
    flags: [DRY_RUN, OUTPUT, YES],
    run: (env, args, target) => runRolloutRepin(env, { ...target, ...guardedOf(args) }),
  }),
  onInferenceService({
    path: 'rollout promote',
    summary: 'Alpha: pass the manual gate a canary waits at',
    usage: 'kubectl ome rollout promote INFERENCESERVICE [flags]',
    description:
      'Sets ome.io/rollout-promote to the canary revision when the canary waits at a manual gate. With\n--override-analysis --yes it passes an analysis gate instead, for this step only, skipping its checks,\nwarm-up and bake.',
    flags: [DRY_RUN, OME_NAMESPACE, OUTPUT, YES, OVERRIDE_ANALYSIS],
    run: (env, args, target) =>
      runRolloutPromote(env, { ...target, omeNamespace: omeNamespaceOf(args), ...guardedOf(args), overrideAnalysis: booleanFlag(args, 'override-analysis') }),
  }),
  onInferenceService({
    path: 'wait',
    summary: 'Wait until OME acknowledges a runtime sync',
    usage: 'kubectl ome wait INFERENCESERVICE --for=runtime-sync=acknowledged --request-id=UUID [--timeout=DURATION]',
    description:
      'Checks the InferenceService every 5 seconds until the ome.io/runtime-sync annotation and\nstatus.lastRuntimeSyncToken both hold the request\'s token, there is no RuntimeDrifted condition and the pin\nis managed. Exits 0 on a match, 2 when the timeout passes or the InferenceService is missing, deleted or\nreplaced, and 1 on an error.',
    flags: [
      { name: 'for', type: 'string', description: 'Required: runtime-sync=acknowledged', values: ['runtime-sync=acknowledged'] },
      { name: 'request-id', type: 'string', description: 'The v4 UUID that runtime sync printed' },
      WAIT_TIMEOUT,
      POLL_INTERVAL,
      OUTPUT,
    ],
    run: (env, args, target) =>
      runWait(env, {
        ...target,
        forPredicate: stringFlag(args, 'for'),
        requestId: stringFlag(args, 'request-id'),
        timeoutMs: durationOr(args, 'timeout', DEFAULT_WAIT_TIMEOUT_MS),
        pollIntervalMs: durationOr(args, 'poll-interval', DEFAULT_POLL_INTERVAL_MS),
        output: outputOf(args),
      }),
  }),
  ...ADMIN_CLUSTER_COMMANDS,
  ...ADMIN_ANALYSIS_SECRETS_COMMANDS,
  DASHBOARD_COMMAND,
  {
    path: 'version',
    summary: 'Print the plugin\'s version and commit, and the Node.js version',
    usage: 'kubectl ome version [-o json|yaml]',
    description: 'Prints the version baked in when the plugin was built, the git commit it was built from and the Node.js\nversion that runs it. Needs no cluster.',
    flags: [OUTPUT],
    run: async ({ deps, args }) => runVersion(deps.io, versionReport(deps.buildInfo ?? readBuildInfo(), process.version), outputOf(args)),
  },
  {
    path: COMPLETE_COMMAND,
    summary: 'Shell completion (kubectl_complete-ome calls this)',
    usage: `kubectl ome ${COMPLETE_COMMAND} WORDS...`,
    description: 'Prints completion candidates in cobra\'s format.',
    flags: [],
    hidden: true,
    // Never reached: runApp answers completion before parsing flags.
    run: async () => 0,
  },
];

/** `runtime sync [--wait]`: with --wait, the wait report follows the action result and its exit code is the command's. */
async function runSyncThenWait(env: CommandEnv, args: ParsedArgs, target: { name: string; namespace: string }): Promise<number> {
  const guarded = guardedOf(args);
  const wait = booleanFlag(args, 'wait');
  if (wait && guarded.dryRun !== 'none') throw new CliError('--wait needs --dry-run=none: a dry run stores no token to wait for');
  const timeoutMs = durationOr(args, 'timeout', DEFAULT_WAIT_TIMEOUT_MS);
  const pollIntervalMs = durationOr(args, 'poll-interval', DEFAULT_POLL_INTERVAL_MS);
  let requestId: string | undefined;
  const code = await runRuntimeSync(env, {
    ...target,
    omeNamespace: omeNamespaceOf(args),
    ...guarded,
    onApplied: (id) => {
      requestId = id;
    },
  });
  if (!wait || code !== 0 || requestId === undefined) return code;
  // Two reports on stdout: YAML needs a document separator; JSON documents follow each other.
  if (guarded.output === 'yaml') env.io.stdout.write('---\n');
  else if (guarded.output !== 'json') env.io.stdout.write('\n');
  return runWait(env, { ...target, forPredicate: RUNTIME_SYNC_ACKNOWLEDGED, requestId, timeoutMs, pollIntervalMs, output: guarded.output });
}

function durationOr(args: ParsedArgs, name: string, fallback: number): number {
  const raw = stringFlag(args, name);
  return raw === undefined ? fallback : parseDurationFlag(name, raw);
}

function visibleCommands(): Command[] {
  return COMMANDS.filter((command) => !command.hidden);
}

function rootHelp(): string {
  return `kubectl ome: OME runtime pinning and rollout plan commands.

Usage:
  kubectl ome COMMAND [flags]

Commands:
${visibleCommands()
  .map((command) => `  ${command.path.padEnd(28)}${command.summary}`)
  .join('\n')}

  admin fleet         The plane's operator: fleet sync waves and fleet-wide drift (see "kubectl ome admin fleet --help")

Exit codes: 0 success, 1 error or refusal, 2 wait ended without a match, 3 the target changed (conflict).
Use "kubectl ome COMMAND --help" for more about a command.
`;
}

function commandHelp(command: Command): string {
  return `${command.summary}.\n\n${command.description}\n\nUsage:\n  ${command.usage}\n\nFlags:\n${formatFlagHelp(command.flags)}\nGlobal flags:\n${formatFlagHelp(GLOBAL_FLAGS)}`;
}

/** Finds the command named by the leading words (the longest path wins); flags may sit anywhere. */
function findCommand(words: readonly string[]): { command?: Command; rest: string[]; group?: string } {
  const matches = COMMANDS.filter((command) => command.path.split(' ').every((part, i) => words[i] === part));
  const command = matches.sort((a, b) => b.path.length - a.path.length)[0];
  if (command) return { command, rest: words.slice(command.path.split(' ').length) };
  // The longest run of leading words that starts some command's path is a group: `admin cluster`.
  for (let length = Math.min(words.length, 3); length > 0; length--) {
    const group = words.slice(0, length).join(' ');
    if (visibleCommands().some((candidate) => candidate.path.startsWith(`${group} `))) return { rest: [...words], group };
  }
  return { rest: [...words] };
}

function groupHelp(group: string): string {
  const commands = visibleCommands().filter((command) => command.path.startsWith(`${group} `));
  return `Usage:\n  kubectl ome ${group} SUBCOMMAND [flags]\n\nSubcommands:\n${commands
    .map((command) => `  ${command.path.slice(group.length + 1).padEnd(20)}${command.summary}`)
    .join('\n')}\n`;
}

function parseVerbosity(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  if (!/^\d+$/.test(raw)) throw new CliError(`invalid argument "${raw}" for "-v, --v" flag: must be a number`);
  return Number(raw);
}

/** kubectl's connection flags as ConnectOptions, with kubectl's one rule between them. */
export function connectOptionsOf(args: ParsedArgs): ConnectOptions {
  const requestTimeout = stringFlag(args, 'request-timeout');
  const certificateAuthority = stringFlag(args, 'certificate-authority');
  const insecure = booleanFlag(args, 'insecure-skip-tls-verify');
  if (certificateAuthority && insecure) {
    throw new CliError('specifying a root certificates file with the insecure flag is not allowed');
  }
  const groups = stringsFlag(args, 'as-group');
  const text = (name: string) => stringFlag(args, name) || undefined;
  const options: ConnectOptions = {
    requestTimeoutMs: requestTimeout === undefined ? 0 : parseDurationFlag('request-timeout', requestTimeout),
    verbosity: parseVerbosity(stringFlag(args, 'v')),
  };
  const kubeconfig = text('kubeconfig');
  const context = text('context');
  const cluster = text('cluster');
  const user = text('user');
  const server = text('server');
  const token = text('token');
  const as = text('as');
  if (kubeconfig) options.kubeconfig = kubeconfig;
  if (context) options.context = context;
  if (cluster) options.cluster = cluster;
  if (user) options.user = user;
  if (server) options.server = server;
  if (token) options.token = token;
  if (certificateAuthority) options.certificateAuthority = certificateAuthority;
  if (insecure) options.insecureSkipTlsVerify = true;
  if (as) options.impersonateUser = as;
  if (groups.length > 0) options.impersonateGroups = groups;
  return options;
}

function invocationOf(command: Command, args: ParsedArgs, operands: string[], deps: AppDeps): Invocation {
  return {
    args,
    operands,
    deps,
    async connect() {
      const options = connectOptionsOf(args);
      const connection = await deps.connect(options);
      const env: CommandEnv = {
        client: connection.client,
        io: deps.io,
        contextName: connection.contextName,
        now: deps.now,
        newRequestId: deps.newRequestId,
        sleep: deps.sleep,
        requestTimeoutMs: options.requestTimeoutMs,
      };
      return { env, connection, namespace: resolveNamespace(stringFlag(args, 'namespace'), connection.contextNamespace) };
    },
    connectWith: (overrides) => deps.connect({ ...connectOptionsOf(args), ...overrides }),
  };
}

/** Names for completion, read through the same connection flags the words carry. */
function completionSource(deps: AppDeps): CompletionSource {
  const connectWith = async (flags: Map<string, string>) => {
    const args: ParsedArgs = { positionals: [], flags: new Map(flags) };
    // Completion must answer quickly or not at all.
    return deps.connect({ ...connectOptionsOf(args), requestTimeoutMs: 5_000, verbosity: 0 });
  };
  return {
    async inferenceServices(flags) {
      const connection = await connectWith(flags);
      const namespace = resolveNamespace(flags.get('namespace'), connection.contextNamespace);
      const page = await connection.client.list(InferenceServices, { namespace, limit: 500 });
      return page.items.map((item) => item.metadata.name);
    },
    async namespaces(flags) {
      const connection = await connectWith(flags);
      const page = await connection.client.list(Resources.namespaces, { limit: 500 });
      return page.items.map((item) => item.metadata.name);
    },
    async clusterIds(flags) {
      const registry = await openClusterRegistry({ positionals: [], flags: new Map(flags) }, deps);
      return (await registry.listClusters()).map((record) => record.id);
    },
  };
}

export async function runApp(argv: readonly string[], deps: AppDeps): Promise<number> {
  if (argv[0] === COMPLETE_COMMAND) {
    const completion = await completeWords(COMMANDS, GLOBAL_FLAGS, argv.slice(1), completionSource(deps));
    deps.io.stdout.write(formatCompletion(completion));
    return 0;
  }
  return runReportingErrors(deps.io, async () => {
    if (isFleetCommand(argv.filter((word) => !word.startsWith('-')))) {
      const openFleet = deps.openFleet ?? (() => Promise.reject(new CliError('admin fleet needs the plane\'s table, which this build cannot reach')));
      const user = deps.environment?.USER || deps.environment?.LOGNAME;
      return runFleetApp(argv, { io: deps.io, now: deps.now, openFleet, ...(user ? { user } : {}) });
    }
    const allFlags = uniqueFlags([...GLOBAL_FLAGS, ...COMMANDS.flatMap((command) => command.flags)]);
    const preview = parseArgs(argv, allFlags);
    const { command, rest, group } = findCommand(preview.positionals);
    if (!command || command.hidden) {
      // A group alone (`kubectl ome admin cluster`) shows its subcommands, as cobra does.
      const groupAlone = group !== undefined && preview.positionals.length === group.split(' ').length;
      if (preview.positionals.length === 0 || preview.positionals[0] === 'help' || groupAlone || booleanFlag(preview, 'help')) {
        deps.io.stdout.write(group ? groupHelp(group) : rootHelp());
        return 0;
      }
      if (group) {
        const words = preview.positionals.slice(0, group.split(' ').length + 1).join(' ');
        throw new CliError(`unknown command "${words}"; see "kubectl ome ${group} --help"`);
      }
      throw new CliError(`unknown command "${preview.positionals[0]}" for "kubectl ome"; see "kubectl ome --help"`);
    }
    const args = parseArgs(argv, [...GLOBAL_FLAGS, ...command.flags]);
    if (booleanFlag(args, 'help')) {
      deps.io.stdout.write(commandHelp(command));
      return 0;
    }
    return command.run(invocationOf(command, args, rest, deps));
  });
}

function uniqueFlags(flags: FlagSpec[]): FlagSpec[] {
  return [...new Map(flags.map((flag) => [flag.name, flag])).values()];
}
