/**
 * `kubectl ome admin fleet sync|status|drift|freeze|unfreeze|windows|override`: fleet-wide
 * commands for the plane's operator.
 * They reach the plane's DynamoDB table, not a cluster: `sync` records a wave (the resync
 * function advances it, every ten minutes), `status` reads waves, `drift` reads the drift
 * reports the resync stores per cluster. The table is named by the same variables the
 * functions read (TABLE_NAME, AWS_REGION, DYNAMODB_ENDPOINT for DynamoDB Local), so the
 * commands need table access, never a cluster credential.
 */
import { booleanFlag, formatFlagHelp, parseArgs, stringFlag, stringsFlag, type FlagSpec, type ParsedArgs } from '../args';
import type { CliIO } from '../env';
import { CliError, CliMessage } from '../errors';
import { boundCell, formatStructured, formatTable, parseOutputFormat, type OutputFormat } from '../output';
import { ControlPlaneError } from '../../shared/domain/errors';
import type { FleetDriftReport } from '../../shared/domain/fleet/fleet-drift';
import { startSyncWave } from '../../shared/use-cases/fleet/advance-sync-wave';
import { defineFreezeWindow, listFreezeWindows, overrideWaveFreeze, removeFreezeWindow } from '../../shared/use-cases/fleet/freeze-windows';
import { DEFAULT_WAVE_ACK_TIMEOUT, describeWaveRuntime, nextWaveStep, parseWaveRuntime, stageOf } from '../../shared/domain/fleet/sync-wave';
import { parseClusterSelector } from '../../shared/domain/fleet/cluster-labels';
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
  /** Who runs the command ($USER), recorded with an override. */
  user?: string;
}

export const FLEET_PREFIX = ['admin', 'fleet'] as const;

const OUTPUT: FlagSpec = { name: 'output', short: 'o', type: 'string', description: 'Output format: table, json or yaml', default: 'table' };
const HELP: FlagSpec = { name: 'help', short: 'h', type: 'boolean', description: 'Print help for the command' };
const NAMESPACE: FlagSpec = { name: 'namespace', short: 'n', type: 'string', description: 'The namespace of a ServingRuntime' };

interface FleetCommand {
  name: 'sync' | 'status' | 'drift' | 'freeze' | 'unfreeze' | 'windows' | 'override';
  summary: string;
  usage: string;
  description: string;
  flags: FlagSpec[];
  run(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number>;
}

const COMMANDS: FleetCommand[] = [
  {
    name: 'sync',
    summary: 'Start a sync wave: roll one runtime change, or one RolloutPolicy edit, forward cluster by cluster',
    usage:
      'kubectl ome admin fleet sync KIND/NAME [-n NAMESPACE] [--clusters a,b,c | -l SELECTOR] [--stage SELECTOR]... [--max-update 1|N|N%] [--soak DURATION] [--ack-timeout 30m] --yes',
    description:
      'Records a wave over the delegate clusters (by default all of them, ordered by id; --clusters gives the\norder; -l takes those whose registry labels match, by id). Per cluster, the resync function sets\nome.io/runtime-sync=fleet-sync-<wave> on the InferenceServices pinned to the runtime that drift with\nRevisionMismatch, and waits until upstream OME acknowledges every one. By default one cluster at a time;\n--stage (repeatable) moves the clusters in stages, each cluster in the first stage its labels match, a stage\nstarting only once every cluster of the one before acknowledged and --soak passed; --max-update lets that\nmany clusters of a stage (or that share of it) sync at once. A RuntimeDrifted with another reason, a\nRuntimePinError or no acknowledgement within --ack-timeout halts the wave; clusters not started stay\nuntouched. Freeze windows (fleet freeze) hold a cluster from starting while they say so.\n\nRolloutPolicy/NAME -n NS rolls a policy edit out instead, over every registered cluster (standalone\nones too): per cluster, ome.io/rollout-repin=now on each InferenceService whose active run is pinned to\nthe older plan of the policy (RolloutPlanDrift PolicyNewerThanRun); acknowledged once the controller repinned\nit; a RolloutRepinRejected event halts the wave.',
    flags: [
      NAMESPACE,
      { name: 'clusters', type: 'string', description: 'Comma-separated cluster ids, in the order to sync' },
      { name: 'selector', short: 'l', type: 'string', description: 'The delegate clusters whose labels match, as kubectl get -l: env=prod,region=eu (kubectl ome admin cluster label sets them)' },
      { name: 'stage', type: 'string', multiple: true, description: 'A stage, by label selector (env=canary); repeat in order. A cluster moves in the first stage it matches' },
      { name: 'max-update', type: 'string', description: 'Clusters of a stage syncing at once: a count (2) or a share of the stage (50%, rounded down, at least 1); default 1' },
      { name: 'soak', type: 'string', description: 'How long to wait after a stage before the next one starts (a Go duration)' },
      { name: 'ack-timeout', type: 'string', description: 'How long each cluster may take to acknowledge (a Go duration)', default: DEFAULT_WAVE_ACK_TIMEOUT },
      { name: 'yes', type: 'boolean', description: 'Confirm the wave without an interactive prompt' },
      OUTPUT,
      HELP,
    ],
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
  {
    name: 'freeze',
    summary: 'Define a freeze window: when waves may not (or, with --allow, may only) start a cluster',
    usage: 'kubectl ome admin fleet freeze NAME --schedule CRON --duration DURATION [--allow] [-l SELECTOR]',
    description:
      'Creates or replaces the window NAME. It opens at each time of --schedule (five-field cron, UTC: minute hour\n' +
      'day-of-month month day-of-week, such as "0 18 * * FRI") and stays open for --duration (a Go duration, at most\n' +
      '168h). A deny window (the default) holds every wave\'s next cluster while open; an --allow window lets waves\n' +
      'start clusters only while one is open. -l applies the window to the clusters whose labels match; without it,\n' +
      'to every cluster. A wave already syncing a cluster still records its acknowledgements.',
    flags: [
      { name: 'schedule', type: 'string', description: 'When the window opens: five-field cron, UTC' },
      { name: 'duration', type: 'string', description: 'How long it stays open (a Go duration, 1m to 168h)' },
      { name: 'allow', type: 'boolean', description: 'An allow window: waves start clusters only while one is open' },
      { name: 'selector', short: 'l', type: 'string', description: 'The clusters it applies to, by their labels (default: every cluster)' },
      OUTPUT,
      HELP,
    ],
    run: runFleetFreeze,
  },
  {
    name: 'unfreeze',
    summary: 'Delete a freeze window',
    usage: 'kubectl ome admin fleet unfreeze NAME',
    description: 'Deletes the window NAME; a wave it held starts its next cluster at the next resync.',
    flags: [HELP],
    run: runFleetUnfreeze,
  },
  {
    name: 'windows',
    summary: 'List the freeze windows and whether each is open now',
    usage: 'kubectl ome admin fleet windows [-o table|json|yaml]',
    description: 'Lists every freeze window: its effect, schedule (UTC), duration, the clusters it applies to, and whether it is open now (until when) or when it next opens.',
    flags: [OUTPUT, HELP],
    run: runFleetWindows,
  },
  {
    name: 'override',
    summary: 'Let a running wave start its clusters whatever the freeze windows say',
    usage: 'kubectl ome admin fleet override WAVE --reason TEXT --yes',
    description: 'Records on the wave that it ignores the freeze windows from now on, with the reason, who ($USER) and when;\n`fleet status WAVE` shows it. The halt rules still apply.',
    flags: [
      { name: 'reason', type: 'string', description: 'Why: kept on the wave for the record (required)' },
      { name: 'yes', type: 'boolean', description: 'Confirm without an interactive prompt' },
      OUTPUT,
      HELP,
    ],
    run: runFleetOverride,
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
  const selectorFlag = stringFlag(args, 'selector');
  if (clusterIds !== undefined && selectorFlag !== undefined) throw new CliError('--clusters and --selector both choose the clusters: give one');
  const selector = selectorFlag === undefined ? undefined : parseClusterSelector(selectorFlag);
  const stages = stringsFlag(args, 'stage');
  const maxUpdate = stringFlag(args, 'max-update');
  const soak = stringFlag(args, 'soak');
  if (soak !== undefined && stages.length < 2) throw new CliError('--soak waits between stages: give at least two --stage selectors');
  const chosen = clusterIds?.join(', ') ?? (selector?.text ? `the delegate clusters matching ${selector.text}, ordered by id` : 'every delegate cluster, ordered by id');
  const staged = stages.length > 0 ? `  stages:       ${stages.join(' | ')}\n` : '';
  const preview = `ALPHA fleet sync wave preview\n  runtime:      ${describeWaveRuntime(runtime)}\n  clusters:     ${chosen}\n${staged}  at once:      ${maxUpdate ?? '1'}\n${soak ? `  soak:         ${soak}\n` : ''}  ack timeout:  ${ackTimeout}\n`;
  deps.io.stderr.write(preview);
  await confirm(deps, booleanFlag(args, 'yes'));
  const clock = { now: () => deps.now().getTime() };
  const wave = await startSyncWave(
    { fleet: access.fleet, clusters: access.clusters, clock },
    {
      runtime,
      ackTimeout,
      ...(clusterIds === undefined ? {} : { clusterIds }),
      ...(selector?.text ? { selector: selector.text } : {}),
      ...(stages.length > 0 ? { stages } : {}),
      ...(maxUpdate === undefined ? {} : { maxUpdate }),
      ...(soak === undefined ? {} : { soak }),
    },
  );
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

/** The stages' lines of `fleet status WAVE`: each stage's selector and progress, the pace, and a soak under way. */
function stagesOf(wave: SyncWave, now: number): string {
  if (!wave.stages) return wave.maxUpdate ? `At once:     ${wave.maxUpdate}\n` : '';
  const lines = wave.stages.map((stage, index) => {
    const members = wave.clusters.filter((step) => stageOf(step) === index);
    const done = members.filter((step) => step.state === 'Acknowledged').length;
    return `  ${index + 1}. ${stage.selector}: ${done}/${members.length} acknowledged`;
  });
  const step = nextWaveStep(wave, now);
  const soaking = step.kind === 'soak' ? `Soaking:     stage ${step.stage + 1} starts at ${iso(step.until) ?? ''}\n` : '';
  return `Stages:      ${wave.stages.length}, ${wave.maxUpdate ?? '1'} at once${wave.soak ? `, soak ${wave.soak} between` : ''}\n${lines.join('\n')}\n${soaking}`;
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
  const header = `Wave:        ${wave.id}\nRuntime:     ${describeWaveRuntime(wave.runtime)}\nToken:       ${wave.token}\nState:       ${wave.state} (${progressOf(wave)} clusters acknowledged)\nAck timeout: ${wave.ackTimeout}\n${wave.selector ? `Selector:    ${wave.selector}\n` : ''}${stagesOf(wave, now.getTime())}`;
  const frozen = wave.frozen && wave.state === 'Running' ? `Frozen:      ${wave.frozen.clusterId} waits: ${wave.frozen.message} (since ${iso(wave.frozen.since) ?? ''})\n` : '';
  const override = wave.freezeOverride ? `Override:    ${boundCell(wave.freezeOverride.reason, 400)} (${wave.freezeOverride.by ? `by ${wave.freezeOverride.by}, ` : ''}${iso(wave.freezeOverride.at) ?? ''})\n` : '';
  const halted = wave.failure
    ? `Halted at:   ${wave.failure.clusterId}${wave.failure.name ? ` ${wave.failure.namespace ?? ''}/${wave.failure.name}` : ''}\nReason:      ${wave.failure.reason}\nMessage:     ${boundCell(wave.failure.message, 400)}\n`
    : '';
  const staged = wave.stages !== undefined;
  const table = formatTable(
    [...(staged ? ['STAGE'] : []), 'CLUSTER', 'STATE', 'TARGETS', 'STARTED', 'ACKNOWLEDGED'],
    wave.clusters.map((step) => [
      ...(staged ? [String(stageOf(step) + 1)] : []),
      step.clusterId,
      step.state,
      step.state === 'Pending' ? undefined : String(step.targets.length),
      iso(step.startedAt),
      iso(step.acknowledgedAt),
    ]),
  );
  deps.io.stdout.write(`${header}${override}${frozen}${halted}\n${table}`);
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

async function runFleetFreeze(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length !== 1) throw new CliError('exactly one window name is required; see "kubectl ome admin fleet freeze --help"');
  const schedule = stringFlag(args, 'schedule');
  const duration = stringFlag(args, 'duration');
  if (schedule === undefined || duration === undefined) throw new CliError('--schedule and --duration are required, such as --schedule "0 18 * * FRI" --duration 62h');
  const selector = stringFlag(args, 'selector');
  const clock = { now: () => deps.now().getTime() };
  const window = await defineFreezeWindow(
    { fleet: access.fleet, clock },
    { name: operands[0] as string, effect: booleanFlag(args, 'allow') ? 'allow' : 'deny', schedule, duration, ...(selector === undefined ? {} : { selector }) },
  );
  const format = outputOf(args);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(window, format));
    return 0;
  }
  deps.io.stdout.write(`freeze window ${window.name} defined: ${window.effect} for ${window.duration} from each "${window.schedule}" (UTC), ${window.selector ? `clusters matching ${window.selector}` : 'every cluster'}\n`);
  return 0;
}

async function runFleetUnfreeze(deps: FleetDepsOfCli, access: FleetAccess, _args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length !== 1) throw new CliError('exactly one window name is required; see "kubectl ome admin fleet unfreeze --help"');
  await removeFreezeWindow(access.fleet, operands[0] as string);
  deps.io.stdout.write(`freeze window ${operands[0] as string} deleted\n`);
  return 0;
}

async function runFleetWindows(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length > 0) throw new CliError('fleet windows takes no arguments');
  const windows = await listFreezeWindows({ fleet: access.fleet, clock: { now: () => deps.now().getTime() } });
  const format = outputOf(args);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(windows, format));
    return 0;
  }
  if (windows.length === 0) {
    deps.io.stdout.write('No freeze windows found.\n');
    return 0;
  }
  const stateOf = (entry: (typeof windows)[number]): string =>
    entry.open ? `open until ${iso(entry.open.end) ?? ''}` : entry.next === undefined ? 'closed' : `closed, opens ${iso(entry.next) ?? ''}`;
  deps.io.stdout.write(
    formatTable(
      ['NAME', 'EFFECT', 'SCHEDULE (UTC)', 'DURATION', 'SELECTOR', 'NOW'],
      windows.map((entry) => [entry.window.name, entry.window.effect, entry.window.schedule, entry.window.duration, entry.window.selector ?? '<all>', stateOf(entry)]),
    ),
  );
  return 0;
}

async function runFleetOverride(deps: FleetDepsOfCli, access: FleetAccess, args: ParsedArgs, operands: string[]): Promise<number> {
  if (operands.length !== 1) throw new CliError('exactly one wave id is required; see "kubectl ome admin fleet override --help"');
  const reason = stringFlag(args, 'reason');
  if (reason === undefined || reason.trim() === '') throw new CliError('--reason is required: it is kept on the wave for the record');
  const waveId = operands[0] as string;
  deps.io.stderr.write(`ALPHA fleet freeze override preview\n  wave:    ${waveId}\n  reason:  ${boundCell(reason, 400)}\n  effect:  the wave starts its next clusters whatever the freeze windows say\n`);
  await confirm(deps, booleanFlag(args, 'yes'));
  const wave = await overrideWaveFreeze({ fleet: access.fleet, clock: { now: () => deps.now().getTime() } }, waveId, reason, deps.user);
  const format = outputOf(args);
  if (format !== 'table') {
    deps.io.stdout.write(formatStructured(wave, format));
    return 0;
  }
  deps.io.stdout.write(`sync wave ${wave.id} overrides the freeze windows from its next run\nfollow-up: kubectl ome admin fleet status ${wave.id}\n`);
  return 0;
}
