/**
 * `kubectl ome runtime sync`: rolls a pinned InferenceService forward by setting
 * `ome.io/runtime-sync` to a new `cli-runtime-sync-<uuid>` token, after checking that
 * the pin is managed, has drifted with RevisionMismatch and nothing else is in flight.
 */
import type { KubeObject } from '../../shared/ports/cluster';
import { computeRevisionName } from '../../shared/domain/runtime/revision';
import { previewAnnotationValue } from '../../shared/domain/annotation-value';
import type { Event as EventObject } from '../../shared/domain/model/core';
import { Resources } from '../../shared/domain/model/resources';
import { Annotation, EventReason, RuntimeKind, SyncTokenMessage } from '../../shared/domain/vocabulary';
import { buildActionResult, formatActionResult, ResultMessage } from '../action-result';
import { collectRuntimeEvidence, type RuntimeEvidence } from '../domain/runtime';
import { DeadlineExceededError, type CommandEnv, type Deadline } from '../env';
import { CliError, CliMessage, ExitCode } from '../errors';
import {
  type GuardedActionOptions,
  checkTargetIdentity,
  confirmAction,
  formatPreview,
  GUARDED_REQUEST_CAP_MS,
  readTarget,
  requestFailed,
  sendGuardedAnnotation,
  startGuardedDeadline,
  targetOf,
} from '../guarded';
import { annotationOf, type InferenceServiceObject } from '../isvc';

export const RUNTIME_SYNC_TOKEN_PREFIX = 'cli-runtime-sync-';

export interface RuntimeSyncOptions extends GuardedActionOptions {
  omeNamespace: string;
  /** Called with the request ID once the API server stored the token (not for dry runs). */
  onApplied?: (requestID: string) => void;
}

export const SyncRefusal = {
  evidence: 'managed runtime sync safety evidence is unavailable or inconsistent',
  /** The waiting token already rolled this InferenceService forward once (the pin's warning event says so). */
  reusedToken: (quotedToken: string, name: string, namespace: string) =>
    `the pending ${Annotation.runtimeSync} value ${quotedToken} already rolled this InferenceService forward once and will not take effect again; remove it (kubectl annotate inferenceservice ${name} -n ${namespace} ${Annotation.runtimeSync}-) and retry`,
  mailbox: 'a rollout promote or rollback mailbox is present',
  stale: 'controller safety evidence is stale or inconsistent',
  unsafeValue: 'a logical annotation value is unsafe to preview',
} as const;

const SNAPSHOT_CHANGED = 'runtime sync safety snapshot changed; refresh runtime effective and retry explicitly';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The refusal, if any, for rolling this InferenceService forward now. */
export function checkRuntimeSync(isvc: InferenceServiceObject, evidence: RuntimeEvidence): string | undefined {
  if (!isManagedDrift(isvc, evidence)) return SyncRefusal.evidence;
  if ([Annotation.rolloutPromote, Annotation.rolloutRollback, Annotation.rolloutRepin].some((key) => annotationOf(isvc, key) !== undefined)) {
    return SyncRefusal.mailbox;
  }
  const rollout = isvc.status?.rollout;
  if (rollout?.activeRun || rollout?.lastRun?.outcome === 'RolledBack' || isvc.status?.canary?.rolledBackRevisionHash) {
    return SyncRefusal.stale;
  }
  const old = annotationOf(isvc, Annotation.runtimeSync) ?? '';
  if (/[\t\r\n]/.test(old) || old.length > 768) return SyncRefusal.unsafeValue;
  return undefined;
}

/**
 * A managed pin on its reported revision that drifted from a live runtime it can read,
 * with no token waiting (unless `allowPendingToken`).
 */
function isManagedDrift(isvc: InferenceServiceObject, evidence: RuntimeEvidence, allowPendingToken = false): boolean {
  return (
    evidence.pinMode === 'ManagedPin' &&
    evidence.pinState === 'Resolved' &&
    evidence.active.revision === isvc.status?.pinnedRevisionName &&
    evidence.drift === 'ReportedTrue/RevisionMismatch' &&
    evidence.live.state === 'Available' &&
    evidence.liveRelation === 'Different' &&
    (allowPendingToken || evidence.sync !== 'Pending') &&
    (isvc.spec?.runtime?.apiGroup === undefined || isvc.spec.runtime.apiGroup === 'ome.io')
  );
}

/**
 * True when the only thing between this InferenceService and a sync is a waiting token
 * that the pin refused because it had already rolled the object forward once: the pin
 * records that as a Warning event naming the value. Without the event (it expired, or
 * the pin has not seen the value yet) the generic refusal stands.
 */
async function isPendingTokenReused(env: CommandEnv, deadline: Deadline, isvc: InferenceServiceObject, evidence: RuntimeEvidence): Promise<boolean> {
  if (evidence.sync !== 'Pending' || !isManagedDrift(isvc, evidence, true)) return false;
  const uid = isvc.metadata.uid ?? '';
  const wanted = SyncTokenMessage.reused(previewAnnotationValue(annotationOf(isvc, Annotation.runtimeSync) ?? ''));
  const cap = env.requestTimeoutMs > 0 ? Math.min(env.requestTimeoutMs, GUARDED_REQUEST_CAP_MS) : GUARDED_REQUEST_CAP_MS;
  try {
    const page = await deadline.run(() => env.client.list<EventObject>(Resources.events, { namespace: isvc.metadata.namespace ?? '', fieldSelector: `involvedObject.uid=${uid}` }), cap);
    return page.items.some((event) => event.involvedObject?.uid === uid && event.reason === EventReason.runtimePinError && event.message === wanted);
  } catch {
    return false; // Events are advisory here: without them the generic refusal stands.
  }
}

/** What must not change between the preview and the patch. */
function fingerprint(isvc: KubeObject, evidence: RuntimeEvidence): string {
  return JSON.stringify([
    isvc.metadata.uid,
    isvc.metadata.resourceVersion,
    evidence.live.source?.metadata.resourceVersion,
    evidence.live.hash?.full,
    evidence.active.source?.metadata.uid,
    evidence.active.source?.metadata.resourceVersion,
  ]);
}

async function collect(env: CommandEnv, deadline: Deadline, isvc: InferenceServiceObject, omeNamespace: string): Promise<RuntimeEvidence> {
  const cap = env.requestTimeoutMs > 0 ? Math.min(env.requestTimeoutMs, GUARDED_REQUEST_CAP_MS) : GUARDED_REQUEST_CAP_MS;
  try {
    return await collectRuntimeEvidence({ get: (type, ns, name) => deadline.run(() => env.client.get(type, ns, name), cap) }, isvc, omeNamespace);
  } catch (error) {
    if (error instanceof DeadlineExceededError && deadline.remainingMs() <= 0) throw new CliError(CliMessage.deadlineExceeded);
    throw requestFailed(error, { verb: 'get', resource: 'servingruntimes.ome.io', name: isvc.spec?.runtime?.name ?? '' });
  }
}

export async function runRuntimeSync(env: CommandEnv, options: RuntimeSyncOptions): Promise<number> {
  const deadline = startGuardedDeadline(env);
  const isvc = await readTarget<InferenceServiceObject>(env, deadline, options.namespace, options.name);
  checkTargetIdentity(isvc, options.namespace, options.name);
  const evidence = await collect(env, deadline, isvc, options.omeNamespace);
  const refusal = checkRuntimeSync(isvc, evidence);
  if (refusal === SyncRefusal.evidence && (await isPendingTokenReused(env, deadline, isvc, evidence))) {
    const token = annotationOf(isvc, Annotation.runtimeSync) ?? '';
    throw new CliError(CliMessage.actionRefused(SyncRefusal.reusedToken(previewAnnotationValue(token), options.name, options.namespace)));
  }
  if (refusal) throw new CliError(CliMessage.actionRefused(refusal));

  const requestID = env.newRequestId();
  if (!UUID_V4.test(requestID)) throw new CliError('generate runtime sync request identity failed');
  const token = `${RUNTIME_SYNC_TOKEN_PREFIX}${requestID}`;
  const targetHash = evidence.live.hash?.short ?? '';
  env.io.stderr.write(formatPreview(syncPreview(env, options, isvc, evidence, requestID, token)));
  await confirmAction(env, deadline, options.yes);

  // Read everything again: the token asks for the live spec when the controller acts, so
  // what the preview showed must still hold when the patch goes out.
  let again: InferenceServiceObject;
  let againEvidence: RuntimeEvidence;
  try {
    again = await readTarget<InferenceServiceObject>(env, deadline, options.namespace, options.name);
    againEvidence = await collect(env, deadline, again, options.omeNamespace);
  } catch (error) {
    if (deadline.remainingMs() <= 0) throw error;
    throw new CliError(SNAPSHOT_CHANGED, ExitCode.conflict, { cause: error });
  }
  if (fingerprint(again, againEvidence) !== fingerprint(isvc, evidence)) throw new CliError(SNAPSHOT_CHANGED, ExitCode.conflict);

  const sent = await sendGuardedAnnotation(env, deadline, isvc, options, {
    key: Annotation.runtimeSync,
    value: token,
    testOldValue: true,
    refreshCommand: 'runtime effective',
    outcomeUnknownMessage: CliMessage.syncOutcomeUnknown,
  });
  const message = { client: ResultMessage.clientDryRun, server: ResultMessage.serverDryRun, none: ResultMessage.syncAccepted }[options.dryRun];
  const result = buildActionResult({
    action: 'runtime sync',
    target: targetOf(isvc),
    dryRun: options.dryRun,
    collectedAt: env.now(),
    sent,
    requestID,
    revisionHash: targetHash,
    message,
    followUp: `kubectl ome runtime effective ${options.name} -n ${options.namespace} --context=${env.contextName} --ome-namespace=${options.omeNamespace}`,
  });
  env.io.stdout.write(formatActionResult(result, options.output));
  if (sent && options.dryRun === 'none') options.onApplied?.(requestID);
  return 0;
}

function syncPreview(
  env: CommandEnv,
  options: RuntimeSyncOptions,
  isvc: InferenceServiceObject,
  evidence: RuntimeEvidence,
  requestID: string,
  token: string,
): { title: string; rows: Array<[string, string]>; warnings: string[] } {
  const source = evidence.source;
  const runtimeName = source
    ? `${source.kind}/${source.kind === RuntimeKind.namespaced ? source.namespace : ''}/${source.runtimeName}`
    : '';
  const targetHash = evidence.live.hash?.short ?? '';
  const predicted = source ? computeRevisionName({ ...source, hash: targetHash }) : '';
  const liveObject = evidence.live.source;
  const pinObject = evidence.active.source;
  return {
    title: 'ALPHA runtime sync preview (acceptance is not convergence)',
    rows: [
      ['Action', 'runtime sync'],
      ['Context', env.contextName],
      ['Workload NS', options.namespace],
      ['OME NS', options.omeNamespace],
      ['Target', `InferenceService/${options.name}`],
      ['UID', isvc.metadata.uid ?? ''],
      ['ResourceVersion', isvc.metadata.resourceVersion ?? ''],
      ['Dry-run', options.dryRun],
      ['Generation', String(isvc.metadata.generation ?? '')],
      ['Reported gen', String(isvc.status?.observedGeneration ?? '')],
      ['Freshness', 'Unverifiable (advisory global status)'],
      ['Pin', evidence.active.revision ?? ''],
      ['Pin source', runtimeName],
      ['Source', runtimeName],
      ...identityRows('Source', liveObject),
      ['Source gen', String(liveObject?.metadata.generation ?? '')],
      ...identityRows('Pin', pinObject),
      ['Current hash', evidence.active.hash?.short ?? ''],
      ['Target hash', targetHash],
      ['Predicted pin', predicted],
      ['Old sync token', evidence.sync],
      ['Pause state', pauseStateOf(isvc)],
      ['Request UUID', requestID],
      ['Set annotation', Annotation.runtimeSync],
      ['New token', token],
    ],
    warnings: [
      'API acceptance is not convergence or serving-revision readiness.',
      'Requests latest merged live runtime when controller consumes the token.',
      'Previewed content is not locked by this annotation.',
      'Parent CAS is not an atomic transaction across runtimes and revisions.',
      'Global observed generation is advisory; freshness is Unverifiable.',
      'Existing pause/freeze and lifecycle/rollout policies remain in effect.',
    ],
  };
}

function identityRows(label: string, object: KubeObject | undefined): Array<[string, string]> {
  return [
    [`${label} UID`, object?.metadata.uid ?? ''],
    [`${label} RV`, object?.metadata.resourceVersion ?? ''],
  ];
}

function pauseStateOf(isvc: InferenceServiceObject): string {
  const paused = annotationOf(isvc, 'ome.io/rollout-paused');
  if (paused === 'true') return 'Paused';
  return paused === 'freeze' ? 'Freeze' : 'Not recognized';
}
