/**
 * The fleet view's data: one snapshot built from the registry table and, for each
 * registered cluster, its InferenceServices and the ControllerRevisions in its OME
 * namespace. Read only, no HTTP: the dashboard server renders what this returns, and the
 * tests call it directly. A cluster that cannot be read shows its error in its row; the
 * others still show.
 */
import type { CanaryStatus, Condition, InferenceService } from '../../shared/domain/model';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, ResourceType } from '../../shared/ports/cluster';
import type { ClusterRecord } from '../../shared/ports/store';
import { canaryEntrypointOf } from '../../shared/domain/rollout/canary';
import { DEFAULT_REVISION_RETENTION, planRevisionGc } from '../../shared/domain/runtime/gc';
import { Annotation, ConditionType, ROLLOUT_PAUSED_ANNOTATION, RolloutHoldName } from '../../shared/domain/vocabulary';
import { describeWaveRuntime, nextWaveStep, stageOf, type SyncWave } from '../../shared/domain/fleet/sync-wave';

/** Rows kept per section, and characters per value: the page stays bounded whatever the fleet holds. */
export const DASHBOARD_LIMITS = { rowsPerSection: 200, valueChars: 256, pageSize: 500, pagesPerList: 40 } as const;

/** What the dashboard reads from the registry table. */
export interface DashboardRegistry {
  listClusters(): Promise<ClusterRecord[]>;
  listCheckpoints(clusterId: string): Promise<Array<{ resource: string; resourceVersion: string; updatedAt: number }>>;
  loadForwarderError(clusterId: string): Promise<{ message: string; at: number } | undefined>;
  /** The fleet sync waves; without it the page shows none. */
  listWaves?(): Promise<SyncWave[]>;
}

export type ClusterReader = Pick<ClusterClient, 'list'>;

export interface GatherDeps {
  registry: DashboardRegistry;
  /** A reader for the cluster, or a thrown error saying why there is none. */
  readerFor(record: ClusterRecord): Promise<ClusterReader>;
  now(): number;
  /** Revisions kept per runtime beyond those referenced, as the GC function's RUNTIME_REVISION_RETENTION. */
  retention?: number;
}

export interface ClusterRow {
  id: string;
  mode: string;
  server: string;
  /** Age of the oldest checkpoint in ms: how far the slowest stream may be behind; null before the first list. */
  lagMs: number | null;
  lastCheckpointAt: string | null;
  lastError: { message: string; at: string } | null;
  inferenceServices: number;
  /** Why the cluster itself could not be read; its other sections are then empty. */
  readError?: string;
}

export interface ServiceRef {
  cluster: string;
  namespace: string;
  name: string;
}

export interface DriftRow extends ServiceRef {
  reason: string;
  message: string;
}

export interface PinRow {
  cluster: string;
  revision: string;
  count: number;
}

export interface GcRow {
  cluster: string;
  namespace: string;
  revisions: number;
  /** Carrying `ome.io/gc-eligible-since`. */
  marked: number;
  /** Unreferenced and past the retention count: marked, to be marked, or due. */
  beyondRetention: number;
  /** Marked longer than the grace period: the next sweep deletes them. */
  due: number;
}

export interface RolloutGroupRow {
  index: number;
  components: string;
  strategy: string;
  /** `step 1/2` for a canary, `done` once finished; '' when the group is no canary. */
  step: string;
  trafficWeight: number | null;
  phase: string;
}

export interface RolloutRow extends ServiceRef {
  runID: string;
  openedAt: string;
  groups: RolloutGroupRow[];
  hold: string;
  /** The RolloutPlanDrift condition as `True/SpecNewerThanRun`, or '' when absent. */
  planDrift: string;
}

/** One stage of a running sync wave as the page shows it. */
export interface WaveStageRow {
  stage: number;
  selector: string;
  acknowledged: number;
  clusters: number;
  /** The clusters syncing now. */
  syncing: string[];
}

export interface WaveRow {
  id: string;
  runtime: string;
  state: string;
  acknowledged: string;
  /** `50% at once, soak 30m`; '' for a wave of one stage, one cluster at a time. */
  pace: string;
  stages: WaveStageRow[];
  /** Why it waits now: a soak, a freeze window, or the halt; '' when it moves. */
  waiting: string;
}

export interface FleetSnapshot {
  collectedAt: string;
  /** Running waves, and those that ended within the last day. */
  waves: WaveRow[];
  /** Why the waves could not be read, when they could not. */
  wavesError?: string;
  clusters: ClusterRow[];
  drift: DriftRow[];
  pins: PinRow[];
  gc: GcRow[];
  rollouts: RolloutRow[];
  /** Sections cut at DASHBOARD_LIMITS.rowsPerSection, with how many rows were left out. */
  truncated: Record<string, number>;
}

/** Bounds one value shown on the page. */
export function clip(value: string | undefined | null): string {
  const text = value ?? '';
  return text.length > DASHBOARD_LIMITS.valueChars ? `${text.slice(0, DASHBOARD_LIMITS.valueChars - 1)}…` : text;
}

function messageOf(error: unknown): string {
  return clip(error instanceof Error ? error.message : String(error));
}

async function listAll<T extends KubeObject>(reader: ClusterReader, type: ResourceType, namespace?: string): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await reader.list<T>(type, { limit: DASHBOARD_LIMITS.pageSize, ...(namespace ? { namespace } : {}), ...(token ? { continue: token } : {}) });
    items.push(...page.items);
    token = page.continue;
    pages += 1;
  } while (token && pages < DASHBOARD_LIMITS.pagesPerList);
  return items;
}

function conditionOf(isvc: InferenceService, type: string): Condition | undefined {
  return isvc.status?.conditions?.find((condition) => condition.type === type);
}

type ComponentStatusView = { rolloutPhase?: string; canary?: CanaryStatus };

/** The hold a run is under, in the order a reader acts on them: a global pause first. */
function holdOf(isvc: InferenceService, canaries: Array<CanaryStatus | undefined>): string {
  if (isvc.metadata.annotations?.[ROLLOUT_PAUSED_ANNOTATION]) return RolloutHoldName.globalPause;
  if (conditionOf(isvc, ConditionType.rolloutPlanReady)?.status === 'False') return RolloutHoldName.planParked;
  if (canaries.some((canary) => canary?.preStepHold)) return RolloutHoldName.canaryPreStep;
  return '';
}

function rolloutOf(cluster: string, isvc: InferenceService): RolloutRow | undefined {
  const run = isvc.status?.rollout?.activeRun;
  if (!run) return undefined;
  const components = (isvc.status?.components ?? {}) as Record<string, ComponentStatusView>;
  const canaries: Array<CanaryStatus | undefined> = [];
  const groups = (run.plan?.groups ?? []).map((pinned, index): RolloutGroupRow => {
    const group = pinned.group ?? {};
    const names = group.components ?? [];
    const first = names[0];
    const phase = first ? (components[first]?.rolloutPhase ?? '') : '';
    if (!group.canary) {
      return { index, components: names.join(','), strategy: group.blueGreen ? 'BlueGreen' : group.rollingUpdate ? 'RollingUpdate' : '', step: '', trafficWeight: null, phase };
    }
    // Each canary unit's state sits on its entrypoint component; status.canary is upstream's alias.
    const canary = components[canaryEntrypointOf(group)]?.canary ?? isvc.status?.canary;
    canaries.push(canary);
    const steps = group.canary.steps?.length ?? 0;
    const current = canary?.currentStep ?? 0;
    return {
      index,
      components: names.join(','),
      strategy: 'Canary',
      step: current >= steps ? 'done' : `step ${current + 1}/${steps}`,
      trafficWeight: canary ? canary.observedTrafficWeight : null,
      phase,
    };
  });
  const drift = conditionOf(isvc, ConditionType.rolloutPlanDrift);
  return {
    cluster,
    namespace: isvc.metadata.namespace ?? '',
    name: isvc.metadata.name,
    runID: run.runID,
    openedAt: run.openedAt,
    groups,
    hold: holdOf(isvc, canaries),
    planDrift: drift ? `${drift.status}/${drift.reason ?? ''}` : '',
  };
}

interface ClusterPart {
  row: ClusterRow;
  drift: DriftRow[];
  pins: PinRow[];
  gc?: GcRow;
  rollouts: RolloutRow[];
}

async function gatherCluster(record: ClusterRecord, deps: GatherDeps, now: number): Promise<ClusterPart> {
  const row: ClusterRow = {
    id: record.id,
    mode: record.mode ?? '',
    server: record.server,
    lagMs: null,
    lastCheckpointAt: null,
    lastError: null,
    inferenceServices: 0,
  };
  const part: ClusterPart = { row, drift: [], pins: [], rollouts: [] };
  try {
    const checkpoints = await deps.registry.listCheckpoints(record.id);
    if (checkpoints.length > 0) {
      const times = checkpoints.map((checkpoint) => checkpoint.updatedAt);
      row.lagMs = Math.max(0, now - Math.min(...times));
      row.lastCheckpointAt = new Date(Math.max(...times)).toISOString();
    }
    const lastError = await deps.registry.loadForwarderError(record.id);
    if (lastError) row.lastError = { message: clip(lastError.message), at: new Date(lastError.at).toISOString() };
  } catch (error) {
    row.readError = `registry: ${messageOf(error)}`;
  }
  try {
    const reader = await deps.readerFor(record);
    const services = await listAll<InferenceService>(reader, Resources.inferenceServices);
    row.inferenceServices = services.length;
    const pinCounts = new Map<string, number>();
    const referenced = new Set<string>();
    for (const isvc of services) {
      const ref = { cluster: record.id, namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name };
      const drifted = conditionOf(isvc, ConditionType.runtimeDrifted);
      if (drifted?.status === 'True') part.drift.push({ ...ref, reason: drifted.reason || 'Unknown', message: clip(drifted.message) });
      const pinned = isvc.status?.pinnedRevisionName;
      if (pinned) {
        pinCounts.set(pinned, (pinCounts.get(pinned) ?? 0) + 1);
        referenced.add(pinned);
      }
      const requested = isvc.spec?.runtime?.revision;
      if (requested) referenced.add(requested);
      const rollout = rolloutOf(record.id, isvc);
      if (rollout) part.rollouts.push(rollout);
    }
    part.pins = [...pinCounts].map(([revision, count]) => ({ cluster: record.id, revision, count }));
    const revisions = await listAll<KubeObject>(reader, Resources.controllerRevisions, record.omeNamespace);
    const decisions = planRevisionGc({
      revisions: revisions.map((revision) => ({
        name: revision.metadata.name,
        creationTimestamp: revision.metadata.creationTimestamp,
        labels: revision.metadata.labels,
        annotations: revision.metadata.annotations,
      })),
      referencedNames: referenced,
      retention: deps.retention ?? DEFAULT_REVISION_RETENTION,
      now,
    });
    part.gc = {
      cluster: record.id,
      namespace: record.omeNamespace,
      revisions: revisions.length,
      marked: revisions.filter((revision) => revision.metadata.annotations?.[Annotation.gcEligibleSince] !== undefined).length,
      beyondRetention: decisions.filter((decision) => decision.action === 'mark' || decision.action === 'wait' || decision.action === 'delete').length,
      due: decisions.filter((decision) => decision.action === 'delete').length,
    };
  } catch (error) {
    row.readError = row.readError ? `${row.readError}; ${messageOf(error)}` : messageOf(error);
  }
  return part;
}

function bounded<T>(name: string, rows: T[], truncated: Record<string, number>): T[] {
  if (rows.length <= DASHBOARD_LIMITS.rowsPerSection) return rows;
  truncated[name] = rows.length - DASHBOARD_LIMITS.rowsPerSection;
  return rows.slice(0, DASHBOARD_LIMITS.rowsPerSection);
}

/** Ended waves stay on the page this long, so a halt is seen. */
const ENDED_WAVES_SHOWN_MS = 24 * 3_600_000;

/** A wave as the page shows it: stage by stage, with what it waits for now. */
export function waveRowOf(wave: SyncWave, now: number): WaveRow {
  const stageCount = wave.stages?.length ?? 1;
  const stages = Array.from({ length: stageCount }, (_, stage): WaveStageRow => {
    const members = wave.clusters.filter((step) => stageOf(step) === stage);
    return {
      stage: stage + 1,
      selector: wave.stages?.[stage]?.selector ?? '',
      acknowledged: members.filter((step) => step.state === 'Acknowledged').length,
      clusters: members.length,
      syncing: members.filter((step) => step.state === 'Syncing').map((step) => step.clusterId),
    };
  });
  const next = nextWaveStep(wave, now);
  const waiting =
    wave.state === 'Halted' && wave.failure
      ? clip(`halted at ${wave.failure.clusterId}: ${wave.failure.reason}: ${wave.failure.message}`)
      : next.kind === 'soak'
        ? `stage ${next.stage + 1} starts at ${new Date(next.until).toISOString()} (soak)`
        : wave.frozen && wave.state === 'Running'
          ? clip(`${wave.frozen.clusterId} waits: ${wave.frozen.message}`)
          : '';
  const pace = [wave.maxUpdate ? `${wave.maxUpdate} at once` : '', wave.soak ? `soak ${wave.soak}` : ''].filter(Boolean).join(', ');
  return {
    id: wave.id,
    runtime: describeWaveRuntime(wave.runtime),
    state: wave.state,
    acknowledged: `${wave.clusters.filter((step) => step.state === 'Acknowledged').length}/${wave.clusters.length}`,
    pace,
    stages,
    waiting,
  };
}

async function gatherWaves(deps: GatherDeps, now: number): Promise<{ waves: WaveRow[]; error?: string }> {
  if (!deps.registry.listWaves) return { waves: [] };
  try {
    const waves = (await deps.registry.listWaves()).filter((wave) => wave.state === 'Running' || now - wave.updatedAt < ENDED_WAVES_SHOWN_MS);
    return { waves: waves.sort((a, b) => b.createdAt - a.createdAt).map((wave) => waveRowOf(wave, now)) };
  } catch (error) {
    return { waves: [], error: messageOf(error) };
  }
}

const byService = (a: ServiceRef, b: ServiceRef): number =>
  a.cluster.localeCompare(b.cluster) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

/**
 * Reads the registry and every registered cluster into one snapshot. Clusters are read
 * in parallel; drift rows are ordered by reason, then cluster, namespace and name.
 */
export async function gatherFleet(deps: GatherDeps): Promise<FleetSnapshot> {
  const now = deps.now();
  const records = (await deps.registry.listClusters()).sort((a, b) => a.id.localeCompare(b.id));
  const [parts, waves] = await Promise.all([Promise.all(records.map((record) => gatherCluster(record, deps, now))), gatherWaves(deps, now)]);
  const truncated: Record<string, number> = {};
  return {
    collectedAt: new Date(now).toISOString(),
    waves: bounded('waves', waves.waves, truncated),
    ...(waves.error ? { wavesError: waves.error } : {}),
    clusters: bounded('clusters', parts.map((part) => part.row), truncated),
    drift: bounded('drift', parts.flatMap((part) => part.drift).sort((a, b) => a.reason.localeCompare(b.reason) || byService(a, b)), truncated),
    pins: bounded('pins', parts.flatMap((part) => part.pins).sort((a, b) => a.cluster.localeCompare(b.cluster) || b.count - a.count || a.revision.localeCompare(b.revision)), truncated),
    gc: bounded('gc', parts.flatMap((part) => (part.gc ? [part.gc] : [])), truncated),
    rollouts: bounded('rollouts', parts.flatMap((part) => part.rollouts).sort(byService), truncated),
    truncated,
  };
}
