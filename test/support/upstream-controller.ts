/**
 * A stand-in for upstream OME's own controller, for the tests of delegate mode: an
 * in-process reconciler over one cluster that pins, reports drift, runs rollouts and
 * renders the engine Deployment with the project's own domain rules, but writes the way
 * upstream's InferenceService reconciler does (../shared/UPSTREAM.md, "Living beside
 * upstream's own controller"):
 *
 * - status: re-read the object, replace its whole status with the desired one
 *   (`Status().Update`, no merge, no field manager of ours), retry on conflict. Whatever
 *   another writer put into status in between is overwritten, as on a real cluster.
 * - it consumes `ome.io/rollout-repin`, `-promote` and `-rollback`, acts on
 *   `ome.io/runtime-sync` when it differs from `status.lastRuntimeSyncToken`, honours
 *   `spec.runtime.revision` with `autoSync: false`, and creates revisions labelled as
 *   upstream labels them.
 *
 * It reaches the cluster through the client it is given (an embedded cluster's in-process
 * client is the server's own channel: none of its requests are in the access log, so a
 * test can tell the plane's writes from the stand-in's). `refuseAcknowledgement` makes it
 * fail one InferenceService's roll-forward: the token stays unacknowledged and a Warning
 * `RuntimePinError` event says why, as when upstream's reconcile of it keeps failing.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../../infra/paths';
import { recordEvent } from '../../shared/use-cases/record-event';
import { createRuntimeLookup, reviewAdmission } from '../../shared/use-cases/admission/review-admission';
import { renderWebhookConfiguration } from '../../shared/use-cases/admission/webhook-configuration';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import type { ReconcileDeps } from '../../shared/use-cases/reconcile-under-lease';
import { ConflictError, ExpiredError, NotFoundError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import { checkRuntimeDrift, pinInferenceService, PIN_REPORTING_CONTROLLER, type DriftCheckDeps } from '../../shared/use-cases/pinning';
import { systemClock, type Clock } from '../../shared/ports/clock';
import type { ClusterClient, KubeObject, ResourceType, WatchEvent } from '../../shared/ports/cluster';
import { applyRepin } from '../../shared/use-cases/rollout-runs';
import { advanceUnderLease } from '../../shared/app/rollout-hints';
import { rolloutAwareWorkloadWriter } from '../../shared/app/engine-workload-writer';
import { refreshPolicyStatus } from '../../shared/use-cases/rollout-runs/refresh-policy-status';
import type { RolloutWork } from '../../shared/app/rollout-hints';
import { createMemoryStores } from '../../shared/adapters/memory';
import { Annotation, DEFAULT_OME_NAMESPACE, EventReason, WorkloadLabel } from '../../shared/domain/vocabulary';

/** controller-runtime's default field manager: the binary's name, `manager` in OME's image. */
export const UPSTREAM_FIELD_MANAGER = 'manager';

/** The message of the Warning recorded when an acknowledgement is refused on purpose. */
export function refusedAcknowledgementMessage(token: string, reason: string): string {
  return `reconcile failed before acknowledging ome.io/runtime-sync ${JSON.stringify(token)}: ${reason}`;
}

/** Decides whether to refuse acknowledging an InferenceService's new sync token; a reason refuses. */
export type AcknowledgementRefusal = (isvc: KubeObject) => string | undefined;

export interface UpstreamControllerOptions {
  /** OME's namespace, where revisions live (default `ome`). */
  omeNamespace?: string;
  /** Names the cluster in lease and idempotency keys (default `upstream`). */
  clusterId?: string;
  clock?: Clock;
  refuseAcknowledgement?: AcknowledgementRefusal;
  /**
   * Runs before each status write's re-read (tests: another writer landing between
   * upstream's reconcile and its status write, which the whole replace then overwrites).
   */
  beforeStatusWrite?: (object: KubeObject) => Promise<void>;
  /** How often active rollout runs are requeued for timed pauses (default 500 ms). */
  resyncRunsEveryMs?: number;
  /**
   * Called after each step of a reconcile, named as the plane's function that does the same
   * in a standalone cluster (`pin`, `repin-apply`, `rollout-run`, `drift-check`), with the
   * object as read when the reconcile started: tests wait on it as on a handled hint.
   */
  onHandled?: (step: UpstreamStep, object: KubeObject) => void;
}

/** The steps of a reconcile, named as the plane's functions that take them in standalone mode. */
export type UpstreamStep = 'pin' | 'repin-apply' | 'rollout-run' | 'drift-check';

/** Which steps to hold, by step and the object's name: a slow controller. */
export type UpstreamHold = (step: UpstreamStep, objectName: string) => boolean;

export interface UpstreamController {
  /** Sets (or, with undefined, clears) the refusal hook. */
  refuseAcknowledgement(refusal: AcknowledgementRefusal | undefined): void;
  /** `ome_rollout_repin_total` as upstream's controller counts it, per `namespace/outcome`. */
  repinCounts(): ReadonlyMap<string, number>;
  /** Whole-status replaces it made, per `namespace/name`. */
  statusWrites(): ReadonlyMap<string, number>;
  /** Reconcile errors it will retry (the last 100), for a failing test's message. */
  errors(): readonly string[];
  /**
   * Holds every step `predicate` matches until the returned release is called: the
   * reconcile stops before that step and runs again from the start once released.
   */
  hold(predicate: UpstreamHold): () => void;
  stop(): Promise<void>;
}

type Job =
  | { kind: 'isvc'; namespace: string; name: string }
  | { kind: 'policy'; namespace: string; name: string }
  | { kind: 'runtime'; type: string; namespace?: string; name: string; change: 'added' | 'modified' | 'deleted' | 'relisted'; object: KubeObject };

/** A reconcile stopped before a held step; it runs again when the hold is released. */
class HeldError extends Error {}

function jobKey(job: Job): string {
  if (job.kind === 'policy') return `policy/${job.namespace}/${job.name}`;
  return job.kind === 'isvc' ? `isvc/${job.namespace}/${job.name}` : `runtime/${job.type}/${job.namespace ?? ''}/${job.name}/${job.change === 'deleted' ? 'deleted' : 'present'}`;
}

/**
 * Status writes as upstream's `updateStatus` makes them: inside a conflict retry, re-read
 * the object and replace its status with the desired one whole.
 */
function upstreamStatusWrites(client: ClusterClient, counted: Map<string, number>, beforeWrite?: (object: KubeObject) => Promise<void>): ClusterClient {
  return {
    get: (type, namespace, name) => client.get(type, namespace, name),
    list: (type, options) => client.list(type, options),
    create: (type, object, options) => client.create(type, object, options),
    replace: (type, object, options) => client.replace(type, object, options),
    patch: (type, namespace, name, patch, options) => client.patch(type, namespace, name, patch, options),
    delete: (type, namespace, name, options) => client.delete(type, namespace, name, options),
    watch: (type, options, onEvent) => client.watch(type, options, onEvent),
    async replaceStatus<T extends KubeObject>(type: ResourceType, desired: T): Promise<T> {
      const { namespace, name, uid } = desired.metadata;
      await beforeWrite?.(desired);
      for (let attempt = 1; ; attempt += 1) {
        const latest = await client.get<T>(type, namespace, name);
        if (uid !== undefined && latest.metadata.uid !== uid) throw new NotFoundError(`${type.kind} ${namespace ?? ''}/${name} was replaced`);
        try {
          const written = await client.replaceStatus<T>(type, { ...latest, status: structuredClone(desired.status) }, { fieldManager: UPSTREAM_FIELD_MANAGER });
          const key = `${namespace ?? ''}/${name}`;
          counted.set(key, (counted.get(key) ?? 0) + 1);
          return written;
        } catch (error) {
          if (!(error instanceof ConflictError) || attempt >= 10) throw error;
        }
      }
    },
  };
}

const WATCHED: Array<{ type: ResourceType; toJobs: (event: WatchEvent, relisted: boolean) => Job[] }> = [
  {
    type: Resources.inferenceServices,
    toJobs: ({ object }) => [{ kind: 'isvc', namespace: object.metadata.namespace ?? '', name: object.metadata.name }],
  },
  ...[Resources.servingRuntimes, Resources.clusterServingRuntimes, Resources.controllerRevisions].map((type) => ({
    type,
    toJobs: (event: WatchEvent, relisted: boolean): Job[] => {
      // A revision matters only when it goes away (RevisionMissing); runtimes on every change.
      if (type === Resources.controllerRevisions && event.type !== 'DELETED') return [];
      const change = relisted ? 'relisted' : event.type === 'ADDED' ? 'added' : event.type === 'DELETED' ? 'deleted' : 'modified';
      return [{ kind: 'runtime', type: type.kind, ...(event.object.metadata.namespace ? { namespace: event.object.metadata.namespace } : {}), name: event.object.metadata.name, change, object: event.object }];
    },
  })),
  // Upstream's RolloutPolicy status controller: a policy's own changes, and (below) the
  // InferenceServices that reference it, which change its attached groups.
  {
    type: Resources.rolloutPolicies,
    toJobs: ({ object }) => [{ kind: 'policy', namespace: object.metadata.namespace ?? '', name: object.metadata.name }],
  },
  {
    type: Resources.deployments,
    toJobs: ({ object }) => {
      const owner = object.metadata.labels?.[WorkloadLabel.inferenceService];
      return owner ? [{ kind: 'isvc', namespace: object.metadata.namespace ?? '', name: owner }] : [];
    },
  },
];

/** The RolloutPolicies an InferenceService's rollout groups name. */
function referencedPolicies(isvc: KubeObject): string[] {
  const groups = ((isvc.spec as { rollout?: { groups?: Array<{ policyRef?: { name?: string } }> } } | undefined)?.rollout?.groups ?? []);
  return [...new Set(groups.flatMap((group) => (group.policyRef?.name ? [group.policyRef.name] : [])))];
}

/** Starts the stand-in over `client`; it lists and watches until `stop`. */
export function startUpstreamController(client: ClusterClient, options: UpstreamControllerOptions = {}): UpstreamController {
  const clock = options.clock ?? systemClock;
  const clusterId = options.clusterId ?? 'upstream';
  const omeNamespace = options.omeNamespace ?? DEFAULT_OME_NAMESPACE;
  const stores = createMemoryStores(clock);
  const writes = new Map<string, number>();
  const errors: string[] = [];
  const writer = upstreamStatusWrites(client, writes, options.beforeStatusWrite);
  let refusal = options.refuseAcknowledgement;
  const abort = new AbortController();
  const reconcile: ReconcileDeps = { leases: stores.leases, clock, holder: 'ome-controller', leaseTtlMs: 60_000, maxConflictRetries: 5 };
  const deps: DriftCheckDeps = {
    clusterId,
    client: writer,
    omeNamespace,
    leases: stores.leases,
    idempotency: stores.idempotency,
    clock,
    config: { renderWorkloads: true, leaseTtlMs: reconcile.leaseTtlMs, maxConflictRetries: reconcile.maxConflictRetries },
    holder: reconcile.holder,
    events: { record: (object, event) => recordEvent(client, object, event) },
    workloads: rolloutAwareWorkloadWriter(clock)(writer),
  };
  const work: RolloutWork = { clusterId, client: writer, clock, reconcile };
  const repins = new Map<string, number>();
  const repinMetrics = {
    countRepin(namespace: string, outcome: string) {
      repins.set(`${namespace}/${outcome}`, (repins.get(`${namespace}/${outcome}`) ?? 0) + 1);
    },
  };

  // One worker, one job at a time: a queue keyed by object, as a controller's workqueue.
  const queue = new Map<string, Job>();
  const retries = new Map<string, number>();
  let draining: Promise<void> | undefined;
  const enqueue = (job: Job): void => {
    if (abort.signal.aborted) return;
    queue.set(jobKey(job), job);
    draining ??= drain().finally(() => {
      draining = undefined;
      if (queue.size > 0) enqueue([...queue.values()][0] as Job);
    });
  };
  const holds = new Set<UpstreamHold>();
  const heldJobs = new Map<string, Job>();
  const step = (name: UpstreamStep, objectName: string): void => {
    if ([...holds].some((held) => held(name, objectName))) throw new HeldError(`${name} ${objectName} held`);
  };
  const drain = async (): Promise<void> => {
    while (queue.size > 0 && !abort.signal.aborted) {
      const [key, job] = queue.entries().next().value as [string, Job];
      queue.delete(key);
      try {
        await run(job);
        retries.delete(key);
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof HeldError) {
          heldJobs.set(key, job);
          continue;
        }
        const attempt = (retries.get(key) ?? 0) + 1;
        retries.set(key, attempt);
        errors.push(`${key}: ${error instanceof Error ? error.message : String(error)}`);
        if (errors.length > 100) errors.shift();
        // Upstream requeues a failed reconcile with backoff.
        const timer = setTimeout(() => enqueue(job), Math.min(50 * 2 ** attempt, 2_000));
        timer.unref?.();
      }
    }
  };

  const run = async (job: Job): Promise<void> => {
    if (job.kind === 'policy') {
      await refreshPolicyStatus({ client: writer, clock }, { namespace: job.namespace, name: job.name });
      return;
    }
    if (job.kind === 'runtime') {
      step('drift-check', job.name);
      await checkRuntimeDrift(deps, { kind: job.type, name: job.name, change: job.change, ...(job.namespace ? { namespace: job.namespace } : {}) });
      options.onHandled?.('drift-check', job.object);
      return;
    }
    await reconcileInferenceService(job);
  };

  const reconcileInferenceService = async (job: Extract<Job, { kind: 'isvc' }>): Promise<void> => {
    let isvc: KubeObject;
    try {
      isvc = await client.get(Resources.inferenceServices, job.namespace, job.name);
    } catch (error) {
      if (error instanceof NotFoundError) return;
      throw error;
    }
    const token = isvc.metadata.annotations?.[Annotation.runtimeSync] ?? '';
    const acknowledged = (isvc.status as { lastRuntimeSyncToken?: string } | undefined)?.lastRuntimeSyncToken ?? '';
    const refused = token !== '' && token !== acknowledged ? refusal?.(isvc) : undefined;
    if (refused !== undefined) {
      await recordEvent(client, isvc, { type: 'Warning', reason: EventReason.runtimePinError, message: refusedAcknowledgementMessage(token, refused), reportingController: PIN_REPORTING_CONTROLLER });
      throw new Error(refusedAcknowledgementMessage(token, refused));
    }
    const key = { namespace: job.namespace, name: job.name, ...(isvc.metadata.uid ? { uid: isvc.metadata.uid } : {}) };
    step('pin', job.name);
    await pinInferenceService(deps, key);
    options.onHandled?.('pin', isvc);
    // Repin and promote requests are consumed first, the run then advanced at once, as upstream's rollout layer does.
    step('repin-apply', job.name);
    const annotations = isvc.metadata.annotations ?? {};
    if (annotations[Annotation.rolloutRepin] !== undefined) {
      const repin = await applyRepin(
        { client: writer, clusterId, clock, idempotency: stores.idempotency, metrics: repinMetrics, claimTtlMs: reconcile.leaseTtlMs, holder: reconcile.holder },
        { ...key, ...(isvc.metadata.resourceVersion ? { requestVersion: isvc.metadata.resourceVersion } : {}) },
      );
      if (repin.outcome === 'applied') await advanceUnderLease(work, key);
    }
    if (annotations[Annotation.rolloutPromote] !== undefined || annotations[Annotation.rolloutRollback] !== undefined) await advanceUnderLease(work, key);
    options.onHandled?.('repin-apply', isvc);
    step('rollout-run', job.name);
    await advanceUnderLease(work, key);
    options.onHandled?.('rollout-run', isvc);
    for (const policy of referencedPolicies(isvc)) enqueue({ kind: 'policy', namespace: job.namespace, name: policy });
  };

  const watchOne = async (entry: (typeof WATCHED)[number]): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const page = await client.list(entry.type, {});
        for (const object of page.items) for (const job of entry.toJobs({ type: 'ADDED', object }, true)) enqueue(job);
        await client.watch(entry.type, { resourceVersion: page.resourceVersion, signal: abort.signal }, (event) => {
          if (event.type === 'BOOKMARK') return;
          for (const job of entry.toJobs(event, false)) enqueue(job);
        });
      } catch (error) {
        if (abort.signal.aborted) return;
        if (!(error instanceof ExpiredError)) {
          errors.push(`watch ${entry.type.plural}: ${error instanceof Error ? error.message : String(error)}`);
          await new Promise((resolveWait) => setTimeout(resolveWait, 200));
        }
      }
    }
  };
  const watches = WATCHED.map((entry) => watchOne(entry));

  // Upstream requeues an InferenceService with an active run after each pass (timed pauses, readiness).
  const runs = setInterval(() => {
    void client.list(Resources.inferenceServices, {}).then(
      (page) => {
        for (const object of page.items) {
          const status = object.status as { rollout?: { activeRun?: unknown } } | undefined;
          if (status?.rollout?.activeRun) enqueue({ kind: 'isvc', namespace: object.metadata.namespace ?? '', name: object.metadata.name });
        }
      },
      () => undefined,
    );
  }, options.resyncRunsEveryMs ?? 500);
  runs.unref?.();

  return {
    refuseAcknowledgement(next) {
      // A refused InferenceService is requeued with backoff: it goes through at its next try.
      refusal = next;
    },
    hold(predicate) {
      holds.add(predicate);
      return () => {
        holds.delete(predicate);
        const again = [...heldJobs.values()];
        heldJobs.clear();
        for (const job of again) enqueue(job);
      };
    },
    repinCounts: () => repins,
    statusWrites: () => writes,
    errors: () => errors,
    async stop() {
      holds.clear();
      heldJobs.clear();
      abort.abort();
      clearInterval(runs);
      queue.clear();
      await Promise.allSettled(watches);
      await draining?.catch(() => undefined);
    },
  };
}

const WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};

export interface UpstreamWebhook {
  url: string;
  stop(): Promise<void>;
}

/**
 * Stands in for upstream's admission webhooks (`inferenceservice.ome-webhook-server.validator`
 * and the revision-immutability one), which run in a delegate cluster: the project's own
 * review rules, which carry upstream's texts, registered in the cluster under upstream's
 * webhook names. Served over plain HTTP to the embedded server; given `tls` (a real
 * kube-apiserver, which calls webhooks over HTTPS only), over TLS with `tls.caData` as caBundle.
 */
export async function serveUpstreamWebhook(
  client: ClusterClient,
  omeNamespace = DEFAULT_OME_NAMESPACE,
  tls?: { cert: Buffer; key: Buffer; caData: string },
): Promise<UpstreamWebhook> {
  const lookupRuntime = createRuntimeLookup(client);
  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        try {
          const answer = await reviewAdmission(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, { lookupRuntime });
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(answer));
        } catch (error) {
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: error instanceof Error ? error.message : String(error) }));
        }
      })();
    });
  };
  const server = tls ? createTlsServer({ cert: tls.cert, key: tls.key }, answer) : createServer(answer);
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => listening());
  });
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration = renderWebhookConfiguration(await readFile(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8'), {
    baseUrl: url,
    clusterId: 'upstream',
    omeNamespace,
    token: deriveWebhookToken(randomBytes(32), 'upstream'),
    ...(tls ? { caBundle: tls.caData } : {}),
  });
  await client.create(WEBHOOK_CONFIGURATIONS, configuration);
  return {
    url,
    async stop() {
      await client.delete(WEBHOOK_CONFIGURATIONS, undefined, configuration.metadata.name).catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}
