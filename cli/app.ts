/**
 * The plugin's command table: parses the arguments, connects only when a command needs the
 * cluster, runs the command and turns failures into `error: <message>` and an exit code.
 */
import {
  booleanFlag,
  formatFlagHelp,
  GLOBAL_FLAGS,
  parseArgs,
  parseDurationFlag,
  stringFlag,
  type FlagSpec,
  type ParsedArgs,
} from './args';
import { isFleetCommand, runFleetApp, type FleetAccess } from './admin/fleet';
import type { CliClusterClient, CliIO, CommandEnv } from './env';
import { CliError } from './errors';
import { parseDryRun } from './guarded';
import { resolveNamespace } from './isvc';
import { parseOutputFormat } from './output';
import { runRolloutExplain } from './rollout/explain';
import { runRolloutPromote } from './rollout/promote';
import { runRolloutRepin } from './rollout/repin';
import { runReportingErrors } from './run';
import { runRuntimeEffective } from './runtime/effective';
import { runRuntimeHistory } from './runtime/history';
import { runRuntimeSync } from './runtime/sync';
import { DEFAULT_POLL_INTERVAL_MS, DEFAULT_WAIT_TIMEOUT_MS, runWait } from './wait';
import { DEFAULT_OME_NAMESPACE } from '../shared/vocabulary';

export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
  requestTimeoutMs: number;
}

export interface Connection {
  client: CliClusterClient;
  contextName: string;
  /** The namespace the kubeconfig context names, if any. */
  contextNamespace?: string;
}

export interface AppDeps {
  io: CliIO;
  connect(options: ConnectOptions): Promise<Connection>;
  now(): Date;
  newRequestId(): string;
  sleep(ms: number): Promise<void>;
  /** The plane's table, for `admin fleet`; absent where the CLI has none. */
  openFleet?(): Promise<FleetAccess>;
}

interface Command {
  path: string;
  summary: string;
  usage: string;
  description: string;
  flags: FlagSpec[];
  run(env: CommandEnv, args: ParsedArgs, target: { name: string; namespace: string }): Promise<number>;
}

const OUTPUT: FlagSpec = { name: 'output', short: 'o', type: 'string', description: 'Output format: table, wide, json or yaml', default: 'table' };
const OME_NAMESPACE: FlagSpec = { name: 'ome-namespace', type: 'string', description: 'Namespace where OME keeps runtime revisions', default: DEFAULT_OME_NAMESPACE };
const DRY_RUN: FlagSpec = { name: 'dry-run', type: 'string', description: 'Dry-run mode: none, client or server (server sends dryRun=All)', default: 'none' };
const YES: FlagSpec = { name: 'yes', type: 'boolean', description: 'Confirm the exact preview without an interactive prompt' };

const omeNamespaceOf = (args: ParsedArgs): string => stringFlag(args, 'ome-namespace') || DEFAULT_OME_NAMESPACE;
const outputOf = (args: ParsedArgs) => parseOutputFormat(stringFlag(args, 'output'));
const guardedOf = (args: ParsedArgs) => ({ dryRun: parseDryRun(stringFlag(args, 'dry-run')), yes: booleanFlag(args, 'yes'), output: outputOf(args) });

const EFFECTIVE: Omit<Command, 'path'> = {
  summary: 'Show the runtime an InferenceService uses, and the revision it is pinned to',
  usage: 'kubectl ome runtime effective INFERENCESERVICE [flags]',
  description:
    'Shows the Live view (the runtime as defined now) and the Active view (the pinned revision, or the live\nruntime when not pinned), with the pin, the runtime sync request, the RuntimeDrifted condition and\nhow the live and active hashes compare. "runtime show" is an alias.',
  flags: [OME_NAMESPACE, OUTPUT],
  run: (env, args, target) => runRuntimeEffective(env, { ...target, omeNamespace: omeNamespaceOf(args), output: outputOf(args) }),
};

export const COMMANDS: Command[] = [
  {
    path: 'runtime sync',
    summary: 'Alpha: roll a pinned InferenceService forward to its runtime\'s live spec',
    usage: 'kubectl ome runtime sync INFERENCESERVICE [flags]',
    description:
      'Sets ome.io/runtime-sync to cli-runtime-sync-<uuid> after checking that rolling forward is safe: a managed\npin that drifted with RevisionMismatch, no earlier token waiting, no rollout in progress. Previews the\nchange on stderr and asks "Confirm this exact action? [y/N]" unless --yes. Prints the request ID to pass\nto "kubectl ome wait --for=runtime-sync=acknowledged".',
    flags: [DRY_RUN, OME_NAMESPACE, OUTPUT, YES],
    run: (env, args, target) => runRuntimeSync(env, { ...target, omeNamespace: omeNamespaceOf(args), ...guardedOf(args) }),
  },
  {
    path: 'runtime history',
    summary: 'List the revisions of an InferenceService\'s runtime, newest first',
    usage: 'kubectl ome runtime history INFERENCESERVICE [flags]',
    description:
      'Lists the ControllerRevisions labeled with the runtime\'s name in the OME namespace, newest first. ROLES\nmarks A (active), Q (spec.runtime.revision), R (status.pinnedRevisionName) and H (listed). Use -o wide for\nthe full names that spec.runtime.revision takes.',
    flags: [OME_NAMESPACE, OUTPUT],
    run: (env, args, target) => runRuntimeHistory(env, { ...target, omeNamespace: omeNamespaceOf(args), output: outputOf(args) }),
  },
  { path: 'runtime effective', ...EFFECTIVE },
  { path: 'runtime show', ...EFFECTIVE, usage: 'kubectl ome runtime show INFERENCESERVICE [flags]' },
  {
    path: 'rollout explain',
    summary: 'Show the declared, live and pinned rollout plans, and what holds the rollout',
    usage: 'kubectl ome rollout explain INFERENCESERVICE [flags]',
    description: 'Prints the Declared, Live and Effective views of the rollout plan under VIEW, ITEM and DETAIL.',
    flags: [OUTPUT],
    run: (env, args, target) => runRolloutExplain(env, { ...target, output: outputOf(args) }),
  },
  {
    path: 'rollout repin',
    summary: 'Alpha: move the active rollout run onto the current plan',
    usage: 'kubectl ome rollout repin INFERENCESERVICE [flags]',
    description:
      'Sets ome.io/rollout-repin to the digest of the current plan after checking that a repin is safe. Previews\nthe change on stderr and asks "Confirm this exact action? [y/N]" unless --yes. Exits 1 on a refusal and 3\nwhen the InferenceService changed after it was read.',
    flags: [DRY_RUN, OUTPUT, YES],
    run: (env, args, target) => runRolloutRepin(env, { ...target, ...guardedOf(args) }),
  },
  {
    path: 'rollout promote',
    summary: 'Alpha: pass the manual gate a canary waits at',
    usage: 'kubectl ome rollout promote INFERENCESERVICE [flags]',
    description: 'Sets ome.io/rollout-promote to the canary revision when the canary waits at a manual gate.',
    flags: [DRY_RUN, OME_NAMESPACE, OUTPUT, YES],
    run: (env, args, target) => runRolloutPromote(env, { ...target, omeNamespace: omeNamespaceOf(args), ...guardedOf(args) }),
  },
  {
    path: 'wait',
    summary: 'Wait until OME acknowledges a runtime sync',
    usage: 'kubectl ome wait INFERENCESERVICE --for=runtime-sync=acknowledged --request-id=UUID [--timeout=DURATION]',
    description:
      'Checks the InferenceService every 5 seconds until the ome.io/runtime-sync annotation and\nstatus.lastRuntimeSyncToken both hold the request\'s token, there is no RuntimeDrifted condition and the pin\nis managed. Exits 0 on a match, 2 when the timeout passes or the InferenceService is missing, deleted or\nreplaced, and 1 on an error.',
    flags: [
      { name: 'for', type: 'string', description: 'Required: runtime-sync=acknowledged' },
      { name: 'request-id', type: 'string', description: 'The v4 UUID that runtime sync printed' },
      { name: 'timeout', type: 'string', description: 'Positive wait timeout, at most 24h', default: '1m0s' },
      { name: 'poll-interval', type: 'string', description: 'How often to check', default: '5s' },
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
  },
];

function durationOr(args: ParsedArgs, name: string, fallback: number): number {
  const raw = stringFlag(args, name);
  return raw === undefined ? fallback : parseDurationFlag(name, raw);
}

const ROOT_HELP = `kubectl ome: OME runtime pinning and rollout plan commands.

Usage:
  kubectl ome COMMAND [flags]

Commands:
${COMMANDS.map((command) => `  ${command.path.padEnd(20)}${command.summary}`).join('\n')}

  admin fleet         The plane's operator: fleet sync waves and fleet-wide drift (see "kubectl ome admin fleet --help")

Exit codes: 0 success, 1 error or refusal, 2 wait ended without a match, 3 the target changed (conflict).
Use "kubectl ome COMMAND --help" for more about a command.
`;

function commandHelp(command: Command): string {
  return `${command.summary}.\n\n${command.description}\n\nUsage:\n  ${command.usage}\n\nFlags:\n${formatFlagHelp(command.flags)}\nGlobal flags:\n${formatFlagHelp(GLOBAL_FLAGS)}`;
}

/** Finds the command named by the leading words; flags may sit anywhere. */
function findCommand(words: readonly string[]): { command?: Command; rest: string[]; group?: string } {
  for (const command of COMMANDS) {
    const parts = command.path.split(' ');
    if (parts.every((part, i) => words[i] === part)) return { command, rest: words.slice(parts.length) };
  }
  const group = COMMANDS.some((command) => command.path.startsWith(`${words[0]} `)) ? words[0] : undefined;
  return { rest: [...words], ...(group ? { group } : {}) };
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((command) => command.path.startsWith(`${group} `));
  return `Usage:\n  kubectl ome ${group} SUBCOMMAND INFERENCESERVICE [flags]\n\nSubcommands:\n${commands
    .map((command) => `  ${command.path.slice(group.length + 1).padEnd(12)}${command.summary}`)
    .join('\n')}\n`;
}

export async function runApp(argv: readonly string[], deps: AppDeps): Promise<number> {
  return runReportingErrors(deps.io, async () => {
    if (isFleetCommand(argv.filter((word) => !word.startsWith('-')))) {
      const openFleet = deps.openFleet ?? (() => Promise.reject(new CliError('admin fleet needs the plane\'s table, which this build cannot reach')));
      return runFleetApp(argv, { io: deps.io, now: deps.now, openFleet });
    }
    const allFlags = uniqueFlags([...GLOBAL_FLAGS, ...COMMANDS.flatMap((command) => command.flags)]);
    const preview = parseArgs(argv, allFlags);
    const { command, rest, group } = findCommand(preview.positionals);
    if (!command) {
      if (preview.positionals.length === 0 || preview.positionals[0] === 'help' || booleanFlag(preview, 'help')) {
        deps.io.stdout.write(group ? groupHelp(group) : ROOT_HELP);
        return 0;
      }
      if (group) throw new CliError(`unknown command "${preview.positionals.slice(0, 2).join(' ')}"; see "kubectl ome ${group} --help"`);
      throw new CliError(`unknown command "${preview.positionals[0]}" for "kubectl ome"; see "kubectl ome --help"`);
    }
    const args = parseArgs(argv, [...GLOBAL_FLAGS, ...command.flags]);
    if (booleanFlag(args, 'help')) {
      deps.io.stdout.write(commandHelp(command));
      return 0;
    }
    if (rest.length !== 1) throw new CliError(`exactly one InferenceService name is required; see "kubectl ome ${command.path} --help"`);
    const name = rest[0] as string;
    const requestTimeout = stringFlag(args, 'request-timeout');
    const requestTimeoutMs = requestTimeout === undefined ? 0 : parseDurationFlag('request-timeout', requestTimeout);
    const connection = await deps.connect({
      ...(stringFlag(args, 'kubeconfig') ? { kubeconfig: stringFlag(args, 'kubeconfig') } : {}),
      ...(stringFlag(args, 'context') ? { context: stringFlag(args, 'context') } : {}),
      requestTimeoutMs,
    });
    const env: CommandEnv = {
      client: connection.client,
      io: deps.io,
      contextName: connection.contextName,
      now: deps.now,
      newRequestId: deps.newRequestId,
      sleep: deps.sleep,
      requestTimeoutMs,
    };
    return command.run(env, args, { name, namespace: resolveNamespace(stringFlag(args, 'namespace'), connection.contextNamespace) });
  });
}

function uniqueFlags(flags: FlagSpec[]): FlagSpec[] {
  return [...new Map(flags.map((flag) => [flag.name, flag])).values()];
}
