/**
 * `kubectl ome wait NAME --for=runtime-sync=acknowledged --request-id=UUID`: polls the
 * InferenceService until the controller has recorded the sync token, and exits 0 on a
 * match, 2 when the wait ends without one, 1 on an error.
 */
import { NotFoundError } from '../shared/domain/errors';
import { Annotation, ConditionType } from '../shared/domain/vocabulary';
import { REPORT_API_VERSION, formatTimestamp } from './action-result';
import { withTimeout, type CommandEnv } from './env';
import { CliError, ExitCode } from './errors';
import { annotationOf, findCondition, type InferenceServiceObject } from './isvc';
import { formatStructured, formatTable, type OutputFormat } from './output';
import { InferenceServices } from './resources';
import { RUNTIME_SYNC_TOKEN_PREFIX } from './runtime/sync';

export const RUNTIME_SYNC_ACKNOWLEDGED = 'runtime-sync=acknowledged';
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;
export const DEFAULT_POLL_INTERVAL_MS = 5_000;
const MAX_WAIT_TIMEOUT_MS = 24 * 3_600_000;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface WaitOptions {
  name: string;
  namespace: string;
  forPredicate: string | undefined;
  requestId: string | undefined;
  timeoutMs: number;
  pollIntervalMs: number;
  output: OutputFormat;
}

type Outcome = 'Matched' | 'TimedOut' | 'NotFound' | 'Deleted' | 'Replaced';

interface Observation {
  tokenState: 'Acknowledged' | 'Pending' | 'StatusOnly' | 'Superseded' | 'Absent';
  driftState: string;
  managedPin: 'Managed' | 'NotApplicable' | 'Unavailable';
}

export function validateWaitOptions(options: WaitOptions): void {
  if (!options.forPredicate) throw new CliError('--for is required: runtime-sync=acknowledged');
  if (options.forPredicate !== RUNTIME_SYNC_ACKNOWLEDGED) {
    throw new CliError(`unsupported --for predicate "${options.forPredicate}"; supported: ${RUNTIME_SYNC_ACKNOWLEDGED}`);
  }
  if (!options.requestId || !UUID_V4.test(options.requestId)) {
    throw new CliError('--request-id must be the canonical v4 UUID that runtime sync printed');
  }
  if (!(options.timeoutMs > 0) || options.timeoutMs > MAX_WAIT_TIMEOUT_MS) throw new CliError('--timeout must be positive and at most 24h');
  if (!(options.pollIntervalMs > 0)) throw new CliError('--poll-interval must be positive');
}

/** What one read of the InferenceService says about the token. */
export function observeRuntimeSync(isvc: InferenceServiceObject, token: string): Observation {
  const requested = annotationOf(isvc, Annotation.runtimeSync) ?? '';
  const recorded = isvc.status?.lastRuntimeSyncToken ?? '';
  let tokenState: Observation['tokenState'];
  if (requested === token) tokenState = recorded === token ? 'Acknowledged' : 'Pending';
  else if (requested !== '') tokenState = 'Superseded';
  else tokenState = recorded !== '' ? 'StatusOnly' : 'Absent';
  const { condition, duplicate } = findCondition(isvc, ConditionType.runtimeDrifted);
  let driftState = 'Clear';
  if (duplicate) driftState = 'Invalid';
  else if (condition) driftState = `Reported${condition.status}`;
  const ref = isvc.spec?.runtime;
  let managedPin: Observation['managedPin'] = 'NotApplicable';
  if (ref?.name && ref.autoSync === false && !ref.revision) managedPin = isvc.status?.pinnedRevisionName ? 'Managed' : 'Unavailable';
  return { tokenState, driftState, managedPin };
}

function matches(observation: Observation): boolean {
  return observation.tokenState === 'Acknowledged' && observation.driftState === 'Clear' && observation.managedPin === 'Managed';
}

export async function runWait(env: CommandEnv, options: WaitOptions): Promise<number> {
  validateWaitOptions(options);
  const token = `${RUNTIME_SYNC_TOKEN_PREFIX}${options.requestId}`;
  const started = env.now().getTime();
  const counts = { gets: 0, polls: 0 };
  let boundUid: string | undefined;
  let last: Observation | undefined;
  let outcome: Outcome | undefined;
  // A terminal sees one progress line, rewritten at each check; pipes and files see nothing.
  const progress = env.io.stderr.isTTY === true;
  for (;;) {
    const read = await readOnce(env, options, counts);
    if (read === undefined) {
      outcome = boundUid === undefined ? 'NotFound' : 'Deleted';
      break;
    }
    boundUid ??= read.metadata.uid;
    if (read.metadata.uid !== boundUid) outcome = 'Replaced';
    else if (read.metadata.deletionTimestamp) outcome = 'Deleted';
    if (outcome) break;
    last = observeRuntimeSync(read, token);
    if (matches(last)) {
      outcome = 'Matched';
      break;
    }
    const remaining = started + options.timeoutMs - env.now().getTime();
    if (remaining <= 0) {
      outcome = 'TimedOut';
      break;
    }
    if (progress) env.io.stderr.write(formatWaitProgress(options, last, env.now().getTime() - started, remaining));
    await env.sleep(Math.min(options.pollIntervalMs, remaining));
    counts.polls += 1;
  }
  const elapsed = env.now().getTime() - started;
  if (progress && counts.gets > 1) env.io.stderr.write(CLEAR_LINE);
  env.io.stdout.write(formatWaitReport(options, outcome, last, elapsed, counts, env.now()));
  if (outcome === 'Matched') return ExitCode.ok;
  env.io.stderr.write('error: RequestedConditionUnmet\n');
  return ExitCode.unmet;
}

async function readOnce(
  env: CommandEnv,
  options: WaitOptions,
  counts: { gets: number },
): Promise<InferenceServiceObject | undefined> {
  counts.gets += 1;
  try {
    return await withTimeout(env.client.get<InferenceServiceObject>(InferenceServices, options.namespace, options.name), env.requestTimeoutMs);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw new CliError(`get InferenceService: ${(error as Error).message}`, ExitCode.error, { cause: error });
  }
}

/** Carriage return and erase to the end of the line (ANSI EL). */
const CLEAR_LINE = '\r\u001b[K';

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

/** The progress line of one check: what the last read showed and how long is left. */
export function formatWaitProgress(options: WaitOptions, observation: Observation, elapsedMs: number, remainingMs: number): string {
  return (
    `${CLEAR_LINE}Waiting for ${RUNTIME_SYNC_ACKNOWLEDGED} on ${options.namespace}/${options.name}: ` +
    `token ${observation.tokenState}, drift ${observation.driftState}, pin ${observation.managedPin} ` +
    `(${seconds(elapsedMs)} elapsed, ${seconds(remainingMs)} left)`
  );
}

function reasonOf(outcome: Outcome, observation: Observation | undefined): string {
  if (outcome === 'Matched') return 'RuntimeSyncObserved';
  if (outcome !== 'TimedOut' || observation === undefined) return 'RuntimeSyncNotRecorded';
  return 'RuntimeSyncNotAcknowledged';
}

function formatWaitReport(
  options: WaitOptions,
  outcome: Outcome,
  observation: Observation | undefined,
  elapsed: number,
  counts: { gets: number; polls: number },
  now: Date,
): string {
  const reason = reasonOf(outcome, observation);
  const evidence = observation ? 'Reported' : 'Unavailable';
  const validity = observation ? 'Valid' : 'Unavailable';
  let interpretation = 'No verified exact acknowledgment';
  if (outcome === 'Matched') interpretation = 'Token acknowledged in bound parent snapshot';
  else if (outcome === 'TimedOut' && observation) interpretation = 'Last observation; currentness unverified';
  if (options.output === 'json' || options.output === 'yaml') {
    return formatStructured(
      {
        apiVersion: REPORT_API_VERSION,
        kind: 'WaitReport',
        metadata: { namespace: options.namespace, name: options.name },
        collectedAt: formatTimestamp(now),
        content: {
          requested: 'RuntimeSync=Acknowledged',
          outcome,
          reason,
          evidence,
          runtimeSync: {
            requestID: options.requestId,
            tokenState: observation?.tokenState ?? 'Unavailable',
            driftState: observation?.driftState ?? 'Unavailable',
            managedPin: observation?.managedPin ?? 'Unavailable',
            placement: 'Direct',
            validity,
            interpretation,
          },
          elapsedMilliseconds: elapsed,
          counts: { gets: counts.gets, watches: 0, polls: counts.polls },
          sourceMethod: counts.polls > 0 ? 'Poll' : 'InitialGET',
          pollingFallback: false,
        },
      },
      options.output,
    );
  }
  return formatTable(
    ['FIELD', 'VALUE'],
    [
      ['Service', `${options.namespace}/${options.name}`],
      ['Requested', 'RuntimeSync=Acknowledged'],
      ['Request ID', options.requestId],
      ['Outcome', outcome],
      ['Token state', observation?.tokenState ?? 'Unavailable'],
      ['Drift state', observation?.driftState ?? 'Unavailable'],
      ['Managed pin', observation?.managedPin ?? 'Unavailable'],
      ['Placement', 'Direct'],
      ['Validity', validity],
      ['Reason', reason],
      ['Evidence', evidence],
      ['Interpretation', interpretation],
      ['Sync caveat', 'Reported token; not live-runtime convergence'],
      ['Attribution', 'Same-object state; not action attribution'],
      ['Source method', counts.polls > 0 ? 'Poll' : 'InitialGET'],
      ['Polling fallback', 'false'],
      ['Elapsed milliseconds', String(elapsed)],
      ['GET / WATCH / polls', `${counts.gets} / 0 / ${counts.polls}`],
    ],
  );
}
