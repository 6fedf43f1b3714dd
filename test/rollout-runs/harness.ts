/**
 * A rollout test bench over the embedded API server's in-process client and memory
 * stores: one InferenceService per test, the engine Deployment the pin use-case would
 * render, the rollout-aware writer in front of the direct one, and the use-cases driven
 * as the functions drive them (under the object's lease).
 */
import { execFileSync } from 'node:child_process';
import { createLogger } from '../../shared/app/logger';
import { Metrics } from '../../shared/app/metrics';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createAppContext } from '../../shared/app/context';
import type { HintInvocation } from '../../shared/app/hint-handler';
import type { ControlPlaneConfig } from '../../shared/app/config';
import type { HintDetail } from '../../shared/domain/hint-event';
import { Resources } from '../../shared/domain/model/resources';
import { createDirectWorkloadWriter } from '../../shared/use-cases/direct-workload-writer';
import type { Clock } from '../../shared/ports/clock';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import type { Stores } from '../../shared/ports/store';
import { createRolloutWorkloadWriter, type AdvanceRolloutRunResult, type RepinMetrics } from '../../shared/use-cases/rollout-runs';
import { advanceUnderLease, handleRepinApplyHint } from '../../shared/app/rollout-hints';
import type { ClusterAnalysis } from '../../shared/app/metrics-binding';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { RolloutGroup, RolloutPolicySpec, RolloutRun } from '../../shared/domain/rollout/types';
import { renderComponentDeployment, renderEngineDeployment, type RenderedComponent } from '../../shared/domain/runtime/workload';
import { createMemoryStores } from '../../shared/adapters/memory';

export const CLUSTER_ID = 'local';
export const NAMESPACE = 'prod';

/** A clock the test moves: rollout times are second-precision, so each step moves a second. */
export class StepClock implements Clock {
  private at = Date.now() - 3_600_000;
  now(): number {
    return this.at;
  }
  tick(seconds = 1): void {
    this.at += seconds * 1000;
  }
}

export interface Bench {
  cluster: EmbeddedCluster;
  client: ClusterClient;
  clock: StepClock;
  stores: Stores;
  repins: { namespace: string; outcome: string }[];
  stop(): Promise<void>;
}

export async function startBench(): Promise<Bench> {
  const cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 15, bookmarkIntervalMs: 60_000 });
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  const clock = new StepClock();
  return { cluster, client: cluster.client, clock, stores: createMemoryStores(clock), repins: [], stop: () => cluster.stop() };
}

const config: ControlPlaneConfig = {
  tableName: 'test',
  eventBusName: 'test',
  region: 'eu-west-1',
  omeNamespace: 'ome',
  revisionRetention: 10,
  revisionGracePeriodMs: 86_400_000,
  renderWorkloads: true,
  leaseTtlMs: 10_000,
  maxConflictRetries: 5,
};

export const manualCanary = (steps: { capacity: string; traffic: number }[]): RolloutGroup => ({
  components: ['engine'],
  canary: { steps: steps.map((step) => ({ ...step, pause: {} })) },
});

export async function createIsvc(bench: Bench, name: string, groups: RolloutGroup[], replicas = 4): Promise<RolloutIsvc> {
  return bench.client.create<RolloutIsvc>(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: { engine: { minReplicas: replicas }, model: { name: 'llama' }, runtime: { name: 'srt' }, rollout: { groups } },
  });
}

export async function createPolicy(bench: Bench, name: string, spec: RolloutPolicySpec): Promise<void> {
  await bench.client.create(Resources.rolloutPolicies, { apiVersion: 'ome.io/v1beta1', kind: 'RolloutPolicy', metadata: { name, namespace: NAMESPACE }, spec });
}

export function getIsvc(bench: Bench, name: string): Promise<RolloutIsvc> {
  return bench.client.get<RolloutIsvc>(Resources.inferenceServices, NAMESPACE, name);
}

export async function getDeployment(bench: Bench, name: string): Promise<(KubeObject & { spec?: { replicas?: number } }) | undefined> {
  return bench.client.get<KubeObject & { spec?: { replicas?: number } }>(Resources.deployments, NAMESPACE, name).catch(() => undefined);
}

/** What the pin use-case does after it writes its status: render the engine and hand it over. */
export async function renderEngine(bench: Bench, name: string, image: string, isvc?: RolloutIsvc): Promise<string> {
  const current = isvc ?? (await getIsvc(bench, name));
  const desired = renderEngineDeployment({
    isvc: { namespace: NAMESPACE, name, uid: current.metadata.uid, engine: { minReplicas: current.spec?.engine?.minReplicas } },
    runtimeName: 'srt',
    spec: { containers: [{ name: 'ome-container', image }] },
  });
  const writer = createRolloutWorkloadWriter({ client: bench.client, direct: createDirectWorkloadWriter(bench.client), clock: bench.clock });
  return writer.apply({ clusterId: CLUSTER_ID, isvc: current, desired, renderedFrom: 'live' });
}

/** What the pin use-case does for a decoder or router: render it from the runtime's config block and hand it over. */
export async function renderComponent(bench: Bench, name: string, component: RenderedComponent, image: string): Promise<string> {
  const current = await getIsvc(bench, name);
  const spec = (current.spec ?? {}) as Record<string, { minReplicas?: number } | undefined>;
  const desired = renderComponentDeployment(component, {
    isvc: { namespace: NAMESPACE, name, uid: current.metadata.uid, [component]: { minReplicas: spec[component]?.minReplicas } },
    runtimeName: 'srt',
    spec: { [`${component}Config`]: { runner: { name: component, image } } },
  });
  const writer = createRolloutWorkloadWriter({ client: bench.client, direct: createDirectWorkloadWriter(bench.client), clock: bench.clock });
  return writer.apply({ clusterId: CLUSTER_ID, component, isvc: current, desired, renderedFrom: 'live' });
}

/**
 * What one pin pass does for a runtime change: render engine, decoder and router (those
 * given an image) and hand them to the writer together, as the pin use-case does.
 */
export async function renderPass(bench: Bench, name: string, images: Partial<Record<'engine' | RenderedComponent, string>>): Promise<Record<string, string>> {
  const current = await getIsvc(bench, name);
  const spec = (current.spec ?? {}) as Record<string, { minReplicas?: number } | undefined>;
  const requests = (['engine', 'decoder', 'router'] as const).flatMap((component) => {
    const image = images[component];
    if (image === undefined) return [];
    const subject = { namespace: NAMESPACE, name, uid: current.metadata.uid, [component]: { minReplicas: spec[component]?.minReplicas } };
    const desired =
      component === 'engine'
        ? renderEngineDeployment({ isvc: subject, runtimeName: 'srt', spec: { containers: [{ name: 'ome-container', image }] } })
        : renderComponentDeployment(component, { isvc: subject, runtimeName: 'srt', spec: { [`${component}Config`]: { runner: { name: component, image } } } });
    return [{ clusterId: CLUSTER_ID, ...(component === 'engine' ? {} : { component }), isvc: current, desired, renderedFrom: 'live' }];
  });
  const writer = createRolloutWorkloadWriter({ client: bench.client, direct: createDirectWorkloadWriter(bench.client), clock: bench.clock });
  const outcomes = (await writer.applyAll?.(requests)) ?? [];
  return Object.fromEntries(requests.map((request, i) => [request.component ?? 'engine', outcomes[i] ?? 'none']));
}

/** Deploys v1 directly, then renders v2: the run opens. */
export async function openRunOn(bench: Bench, name: string, groups: RolloutGroup[]): Promise<RolloutIsvc> {
  await createIsvc(bench, name, groups);
  await renderEngine(bench, name, 'srt:v1');
  bench.clock.tick();
  const outcome = await renderEngine(bench, name, 'srt:v2');
  if (outcome !== 'run-opened') throw new Error(`expected a run to open, got ${outcome}`);
  return getIsvc(bench, name);
}

export async function editGroups(bench: Bench, name: string, groups: RolloutGroup[]): Promise<void> {
  await bench.client.patch(Resources.inferenceServices, NAMESPACE, name, { spec: { rollout: { groups } } }, { type: 'merge' });
}

export async function annotate(bench: Bench, name: string, key: string, value: string): Promise<RolloutIsvc> {
  return bench.client.patch<RolloutIsvc>(Resources.inferenceServices, NAMESPACE, name, { metadata: { annotations: { [key]: value } } }, { type: 'merge' });
}

export function invocationFor(bench: Bench, hint: HintDetail, requestId: string): HintInvocation {
  const app = createAppContext({ config, stores: bench.stores, clock: bench.clock });
  return {
    hint,
    app,
    cluster: { mode: 'standalone', id: CLUSTER_ID, client: bench.client, omeNamespace: 'ome' },
    logger: createLogger('test', { logLevel: 'SILENT' }),
    metrics: new Metrics({ serviceName: 'test', namespace: 'test' }),
    requestId,
    notifications: { committed: () => undefined },
  };
}

/** The hint the forwarder sends when an ISVC's request annotation takes a new value. */
export function requestHint(isvc: RolloutIsvc, changed: { rolloutRepin?: boolean; rolloutPromote?: boolean }): HintDetail {
  return {
    clusterId: CLUSTER_ID,
    apiVersion: isvc.apiVersion,
    kind: isvc.kind,
    namespace: NAMESPACE,
    name: isvc.metadata.name,
    uid: isvc.metadata.uid ?? '',
    resourceVersion: isvc.metadata.resourceVersion ?? '',
    change: 'modified',
    changed: { spec: false, runtimeSync: false, rolloutRepin: changed.rolloutRepin ?? false, rolloutPromote: changed.rolloutPromote ?? false },
    observedAt: new Date().toISOString(),
  };
}

let requests = 0;

/** Delivers a hint to the repin-apply use-case as its function would. */
export function deliverToRepinApply(bench: Bench, hint: HintDetail): ReturnType<typeof handleRepinApplyHint> {
  requests += 1;
  const metrics: RepinMetrics = { countRepin: (namespace, outcome) => bench.repins.push({ namespace, outcome }) };
  return handleRepinApplyHint(invocationFor(bench, hint, `request-${requests}`), metrics);
}

/** Sets `ome.io/rollout-repin` and delivers the hint that change produces. */
export async function requestRepin(bench: Bench, name: string, value: string) {
  const isvc = await annotate(bench, name, 'ome.io/rollout-repin', value);
  const result = await deliverToRepinApply(bench, requestHint(isvc, { rolloutRepin: true }));
  return 'repin' in result ? result.repin : undefined;
}

/** One pass of the run, as rollout-run makes on a hint. */
export function advanceOnce(bench: Bench, name: string): Promise<AdvanceRolloutRunResult> {
  const work = {
    clusterId: CLUSTER_ID,
    client: bench.client,
    clock: bench.clock,
    reconcile: { leases: bench.stores.leases, clock: bench.clock, holder: 'advance', leaseTtlMs: 10_000, maxConflictRetries: 5 },
  };
  return advanceUnderLease(work, { namespace: NAMESPACE, name });
}

/** Advances the run (as rollout-run does on each hint, sampling with `analysis` when given) until `done` holds or time runs out. */
export async function advanceUntil(
  bench: Bench,
  name: string,
  done: (result: AdvanceRolloutRunResult, isvc: RolloutIsvc) => boolean,
  timeoutMs = 5_000,
  analysis?: ClusterAnalysis,
): Promise<RolloutIsvc> {
  const deadline = Date.now() + timeoutMs;
  const work = {
    clusterId: CLUSTER_ID,
    client: bench.client,
    clock: bench.clock,
    reconcile: { leases: bench.stores.leases, clock: bench.clock, holder: 'advance', leaseTtlMs: 10_000, maxConflictRetries: 5 },
    ...(analysis ? { analysis } : {}),
  };
  for (;;) {
    const result = await advanceUnderLease(work, { namespace: NAMESPACE, name });
    const isvc = await getIsvc(bench, name);
    if (done(result, isvc)) return isvc;
    if (Date.now() > deadline) throw new Error(`run of ${name} did not settle: ${JSON.stringify({ result, canary: isvc.status?.canary })}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function condition(isvc: RolloutIsvc, type: string) {
  return isvc.status?.conditions?.find((entry) => entry.type === type);
}

export async function eventsOf(bench: Bench, name: string, reason: string): Promise<{ type?: string; message?: string; count?: number }[]> {
  const page = await bench.client.list<KubeObject & { reason?: string; type?: string; message?: string; count?: number; involvedObject?: { name?: string } }>(
    Resources.events,
    { namespace: NAMESPACE },
  );
  return page.items.filter((event) => event.involvedObject?.name === name && event.reason === reason);
}

/** The plan digest as the seed computes it: the group digests joined by `|`, through sha256sum. */
export function digestAsTheSeedDoes(groupDigests: string[]): string {
  const hex = execFileSync('sh', ['-c', `printf '%s' '${groupDigests.join('|')}' | sha256sum | cut -c1-12`], { encoding: 'utf8' }).trim();
  return `rp1:${hex}`;
}

/** The active run, which the test expects to be there. */
export function activeRunOf(isvc: RolloutIsvc): RolloutRun {
  const run = isvc.status?.rollout?.activeRun;
  if (!run) throw new Error(`${isvc.metadata.name} has no active run`);
  return run;
}

/** `status.rollout.groups[*].observedDigest`, in group order. */
export function observedDigests(isvc: RolloutIsvc): string[] {
  return (isvc.status?.rollout?.groups ?? []).map((group) => group.observedDigest ?? '');
}
