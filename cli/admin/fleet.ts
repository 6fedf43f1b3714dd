/**
 * `kubectl ome admin fleet sync|status|drift`: fleet-wide commands for the plane's operator.
 * They reach the plane's DynamoDB table, not a cluster: `sync` records a wave (the resync
 * function advances it, every ten minutes), `status` reads waves, `drift` reads the drift
 * reports the resync stores per cluster. The table is named by the same variables the
 * functions read (TABLE_NAME, AWS_REGION, DYNAMODB_ENDPOINT for DynamoDB Local), so the
 * commands need table access, never a cluster credential.
 */
import { booleanFlag, formatFlagHelp, parseArgs, stringFlag, type FlagSpec, type ParsedArgs } from '../args';
import type { CliIO } from '../env';
import { CliError, CliMessage } from '../errors';
import { boundCell, formatStructured, formatTable, parseOutputFormat, type OutputFormat } from '../output';
import { ControlPlaneError } from '../../shared/domain/errors';
import type { FleetDriftReport } from '../../shared/domain/fleet/fleet-drift';
import { startSyncWave } from '../../shared/use-cases/fleet/advance-sync-wave';
import { DEFAULT_WAVE_ACK_TIMEOUT, describeWaveRuntime, parseWaveRuntime } from '../../shared/domain/fleet/sync-wave';
import type { SyncWave } from '../../shared/domain/fleet/sync-wave';
import type { ClusterRegistry, FleetStore } from '../../shared/ports/store';

/** What the fleet commands need: the plane's table, through its stores. */
export interface FleetAccess {
  fleet: FleetStore;
  clusters: ClusterRegistry;
  close(): void;
}

export interface FleetDepsOfCli {
  io: CliIO;
  now(): Date;
  /** Opens the plane's table from the environment; CliError when it is not configured. */
  openFleet(): Promise<FleetAccess>;
}

export const FLEET_PREFIX = ['admin', 'fleet'] as const;

const OUTPUT: FlagSpec = { name: 'output', short: 'o', type: 'string', description: 'Output format: table, json or yaml', default: 'table' };
const HELP: FlagSpec = { name: 'help', short: 'h', type: 'boolean', description: 'Print help for the command' };
const NAMESPACE: FlagSpec = { name: 'namespace', short: 'n', type: 'string', description: 'The namespace of a ServingRuntime' };

interface FleetCommand {
  name: 'sync' | 'status' | 'drift';
  summary: string;
  usage: string;
  description: string;
  flags: FlagSpec[];
  run(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number>;
}

const COMMANDS: FleetCommand[] = [
  {
    name: 'sync',
    summary: 'Start a sync wave: roll one runtime change forward cluster by cluster',
    usage: 'kubectl ome admin fleet sync KIND/NAME [-n NAMESPACE] [--clusters a,b,c] [--ack-timeout 30m] --yes',
    description:
      'Records a wave over the delegate clusters (by default all of them, ordered by id; --clusters gives the\norder). Per cluster in turn, the resync function sets ome.io/runtime-sync=fleet-sync-<wave> on the\nInferenceServices pinned to the runtime that drift with RevisionMismatch, and waits until upstream OME\nacknowledges every one before the next cluster. A RuntimeDrifted with another reason, a RuntimePinError or\nno acknowledgement within --ack-timeout halts the wave; later clusters stay untouched.',
    flags: [NAMESPACE, { name: 'clusters', type: 'string', description: 'Comma-separated cluster ids, in the order to sync' }, { name: 'ack-timeout', type: 'string', description: 'How long each cluster may take to acknowledge (a Go duration)', default: DEFAULT_WAVE_ACK_TIMEOUT }, { name: 'yes', type: 'boolean', description: 'Confirm the wave without an interactive prompt' }, OUTPUT, HELP],
    run: runFleetSync,
  },
  {
    name: 'status',
    summary: 'List sync waves, or show one wave cluster by cluster',
    usage: 'kubectl ome admin fleet status [WAVE] [-o table|json|yaml]',
    description: 'Without WAVE, lists every wave with its progress. With WAVE, shows each cluster\'s state, targets and times, and why the wave halted.',
    flags: [OUTPUT, HELP],
    run: runFleetStatus,
  },
  {
    name: 'drift',
    summary: 'Report which InferenceServices drift, by cluster and reason',
    usage: 'kubectl ome admin fleet drift [-o table|json|yaml]',
    description: 'Prints the drift reports the resync stores for every registered cluster (at most ten minutes old):\neach InferenceService reporting RuntimeDrifted, with its reason and pinned revision.',
    flags: [OUTPUT, HELP],
    run: runFleetDrift,
  },
];

const FLEET_HELP = `Fleet-wide commands of the plane's operator (they use the plane's table: TABLE_NAME, AWS_REGION,
DYNAMODB_ENDPOINT).

Usage:
  kubectl ome admin fleet SUBCOMMAND [flags]

Subcommands:
${COMMANDS.map((command) => `  ${command.name.padEnd(10)}${command.summary}`).join('\n')}
`;

/** True when argv names a fleet command (flags may sit anywhere, as elsewhere in the plugin). */
export function isFleetCommand(positionals: readonly string[]): boolean {
  return positionals[0] === FLEET_PREFIX[0] && positionals[1] === FLEET_PREFIX[1];
}

function outputOf(args: ParsedArgs): Exclude<OutputFormat, 'wide'> {
  const format = parseOutputFormat(stringFlag(args, 'output'));
  return format === 'wide' ? 'table' : format;
}

/** Runs `kubectl ome admin fleet …`; the caller has already seen that argv names it. */
export async function runFleetApp(argv: readonly string[], deps: FleetDepsOfCli): Promise<number> {
  const allFlags = [...new Map(COMMANDS.flatMap((command) => command.flags).map((flag) => [flag.name, flag])).values()];
  const preview = parseArgs(argv, allFlags);
  const words = preview.positionals.slice(FLEET_PREFIX.length);
  const command = COMMANDS.find((candidate) => candidate.name === words[0]);
  if (!command) {
    if (words.length === 0 || words[0] === 'help') {
      deps.io.stdout.write(FLEET_HELP);
      return 0;
    }
    throw new CliError(`unknown command "admin fleet ${words[0] ?? ''}"; see "kubectl ome admin fleet --help"`);
  }
  const args = parseArgs(argv, command.flags);
  if (booleanFlag(args, 'help')) {
    deps.io.stdout.write(`${command.summary}.\n\n${command.description}\n\nUsage:\n  ${command.usage}\n\nFlags:\n${formatFlagHelp(command.flags)}`);
    return 0;
  }
  const operands = args.positionals.slice(FLEET_PREFIX.length + 1);
  const access = await deps.openFleet();
  try {
    return await command.run(deps, access, args, operands);
  } catch (error) {
    if (error instanceof ControlPlaneError && !(error instanceof CliError)) throw new CliError(error.message, undefined, { cause: error });
    throw error;
  } finally {
    access.close();
  }
}

function age(from: number, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - from) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

const iso = (epochMs: number | undefined): string | undefined => (epochMs === undefined ? undefined : new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z'));

async function confirm(deps: FleetDepsOfCli, yes: boolean): Promise<void> {
  if (yes) return;
  if (!deps.io.stdin.isTTY) throw new CliError(CliMessage.notConfirmed);
  deps.io.stderr.write('Confirm this exact action? [y/N] ');
  const answer = ((await deps.io.stdin.readLine()) ?? '').trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new CliError(CliMessage.notConfirmed);
}

async function runFleetSync(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length !== 1) throw new CliError('exactly one runtime is required, as ServingRuntime/NAME or ClusterServingRuntime/NAME; see "kubectl ome admin fleet sync --help"');
  let runtime;
  try {
    runtime = parseWaveRuntime(operands[0] as string, stringFlag(args, 'namespace'));
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const clustersFlag = stringFlag(args, 'clusters');
  const clusterIds = clustersFlag === undefined ? undefined : clustersFlag.split(',').map((id) => id.trim()).filter((id) => id !== '');
  const ackTimeout = stringFlag(args, 'ack-timeout') ?? DEFAULT_WAVE_ACK_TIMEOUT;
  const preview = `ALPHA fleet sync wave preview\n  runtime:      ${describeWaveRuntime(runtime)}\n  clusters:     ${clusterIds?.join(', ') ?? 'every delegate cluster, ordered by id'}\n  ack timeout:  ${ackTimeout}\n`;
  deps.io.stderr.write(preview);
  await confirm(deps, booleanFlag(args, 'yes'));
  const clock = { now: () => deps.now().getTime() };
  const wave = await startSyncWave({ fleet: access.fleet, clusters: access.clusters, clock }, { runtime, ackTimeout, ...(clusterIds === undefined ? {} : { clusterIds }) });
  const format = outputOf(args);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(wave, format));
    return 0;
  }
  deps.io.stdout.write(
    formatTable(
      ['WAVE', 'TOKEN', 'CLUSTERS', 'ACK-TIMEOUT'],
      [[wave.id, wave.token, wave.clusters.map((step) => step.clusterId).join(','), wave.ackTimeout]],
    ) + `follow-up: kubectl ome admin fleet status ${wave.id}  (the resync advances the wave every 10 minutes)\n`,
  );
  return 0;
}

function progressOf(wave: SyncWave): string {
  return `${wave.clusters.filter((step) => step.state === 'Acknowledged').length}/${wave.clusters.length}`;
}

function currentOf(wave: SyncWave): string | undefined {
  return wave.failure?.clusterId ?? wave.clusters.find((step) => step.state !== 'Acknowledged')?.clusterId;
}

async function runFleetStatus(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  const format = outputOf(args);
  const now = deps.now();
  if (operands.length === 0) {
    const waves = await access.fleet.listWaves();
    if (format !== 'table') {
      deps.io.stdout.write(formatStructured(waves, format));
      return 0;
    }
    if (waves.length === 0) {
      deps.io.stdout.write('No sync waves found.\n');
      return 0;
    }
    deps.io.stdout.write(formatTable(['WAVE', 'RUNTIME', 'STATE', 'ACKNOWLEDGED', 'CURRENT', 'AGE'], waves.map((wave) => [wave.id, describeWaveRuntime(wave.runtime), wave.state, progressOf(wave), currentOf(wave), age(wave.createdAt, now)])));
    return 0;
  }
  if (operands.length !== 1) throw new CliError('at most one wave id; see "kubectl ome admin fleet status --help"');
  const wave = await access.fleet.getWave(operands[0] as string);
  if (!wave) throw new CliError(`sync wave ${operands[0] as string} not found`);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(wave, format));
    return 0;
  }
  const header = `Wave:        ${wave.id}\nRuntime:     ${describeWaveRuntime(wave.runtime)}\nToken:       ${wave.token}\nState:       ${wave.state} (${progressOf(wave)} clusters acknowledged)\nAck timeout: ${wave.ackTimeout}\n`;
  const halted = wave.failure
    ? `Halted at:   ${wave.failure.clusterId}${wave.failure.name ? ` ${wave.failure.namespace ?? ''}/${wave.failure.name}` : ''}\nReason:      ${wave.failure.reason}\nMessage:     ${boundCell(wave.failure.message, 400)}\n`
    : '';
  const table = formatTable(
    ['CLUSTER', 'STATE', 'TARGETS', 'STARTED', 'ACKNOWLEDGED'],
    wave.clusters.map((step) => [step.clusterId, step.state, step.state === 'Pending' ? undefined : String(step.targets.length), iso(step.startedAt), iso(step.acknowledgedAt)]),
  );
  deps.io.stdout.write(`${header}${halted}\n${table}`);
  return 0;
}

async function runFleetDrift(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length > 0) throw new CliError('fleet drift takes no arguments');
  const [reports, clusters] = await Promise.all([access.fleet.listDriftReports(), access.clusters.listClusters()]);
  const byCluster = new Map(reports.map((report) => [report.clusterId, report]));
  const format = outputOf(args);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(clusters.map((cluster) => byCluster.get(cluster.id) ?? { clusterId: cluster.id, observed: false }), format));
    return 0;
  }
  const now = deps.now();
  const summary = formatTable(
    ['CLUSTER', 'MODE', 'INFERENCESERVICES', 'DRIFTED', 'OBSERVED', 'ERROR'],
    clusters.map((cluster) => {
      const report: FleetDriftReport | undefined = byCluster.get(cluster.id);
      return [cluster.id, cluster.mode, report ? String(report.inferenceServices) : undefined, report ? String(report.drifted) : undefined, report ? `${age(report.observedAt, now)} ago` : 'not yet', report?.error ? boundCell(report.error) : undefined];
    }),
  );
  const rows = clusters.flatMap((cluster) =>
    (byCluster.get(cluster.id)?.rows ?? []).map((row) => [cluster.id, row.namespace, row.name, `${row.runtimeKind}/${row.runtime}`, row.pinnedRevision, row.reason, boundCell(row.message, 80)]),
  );
  const details = rows.length === 0 ? 'No InferenceService reports RuntimeDrifted.\n' : formatTable(['CLUSTER', 'NAMESPACE', 'NAME', 'RUNTIME', 'PINNED', 'REASON', 'MESSAGE'], rows);
  deps.io.stdout.write(`${summary}\n${details}`);
  return 0;
}
