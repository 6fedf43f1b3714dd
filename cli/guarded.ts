/**
 * The guarded flow every writing command follows: preview the exact change on stderr,
 * confirm it, then send one JSON Patch whose `test` operations make the API server apply
 * nothing if the target changed after the CLI read it.
 */
import { ConflictError, ControlPlaneError, InvalidInputError, UnavailableError } from '../shared/domain/errors';
import type { KubeObject } from '../shared/ports/cluster';
import type { ActionTarget, DryRunMode } from './action-result';
import { describeApiRefusal, INFERENCE_SERVICE_RESOURCE } from './api-refusal';
import { Deadline, DeadlineExceededError, type CommandEnv } from './env';
import { CliError, CliMessage, ExitCode } from './errors';
import { formatTable, type OutputFormat } from './output';
import { InferenceServices } from './resources';

/** A whole guarded command has 45 seconds, the prompt included. */
export const GUARDED_ACTION_BUDGET_MS = 45_000;
/** Each API request of a guarded command has at most 10 seconds. */
export const GUARDED_REQUEST_CAP_MS = 10_000;

export const CONFIRM_PROMPT = 'Confirm this exact action? [y/N] ';

export type JsonPatchOperation =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add'; path: string; value: unknown };

/** Escapes a key for a JSON Pointer (RFC 6901): `ome.io/x` → `ome.io~1x`. */
export function escapeJsonPointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The patch that sets one annotation: tests the UID and resourceVersion read, and the old
 * value when `testOldValue` is set and one exists; creates the annotations map when absent.
 */
export function buildAnnotationPatch(
  object: KubeObject,
  key: string,
  value: string,
  options: { testOldValue: boolean },
): JsonPatchOperation[] {
  const annotations = object.metadata.annotations;
  const path = `/metadata/annotations/${escapeJsonPointer(key)}`;
  const patch: JsonPatchOperation[] = [
    { op: 'test', path: '/metadata/uid', value: object.metadata.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: object.metadata.resourceVersion },
  ];
  if (options.testOldValue && annotations && Object.hasOwn(annotations, key)) {
    patch.push({ op: 'test', path, value: annotations[key] });
  }
  if (!annotations) patch.push({ op: 'add', path: '/metadata/annotations', value: {} });
  patch.push({ op: 'add', path, value });
  return patch;
}

export function targetOf(object: KubeObject): ActionTarget {
  return {
    kind: 'InferenceService',
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    uid: object.metadata.uid ?? '',
    resourceVersion: object.metadata.resourceVersion ?? '',
  };
}

/** Starts the 45-second clock of one guarded command. */
export function startGuardedDeadline(env: CommandEnv): Deadline {
  return new Deadline(() => env.now(), GUARDED_ACTION_BUDGET_MS);
}

function requestCap(env: CommandEnv): number {
  return env.requestTimeoutMs > 0 ? Math.min(env.requestTimeoutMs, GUARDED_REQUEST_CAP_MS) : GUARDED_REQUEST_CAP_MS;
}

/** Reads the InferenceService before any change; every failure here is the fixed access message (with the server's refusal, if any). */
export async function readTarget<T extends KubeObject>(
  env: CommandEnv,
  deadline: Deadline,
  namespace: string,
  name: string,
): Promise<T> {
  try {
    return await deadline.run(() => env.client.get<T>(InferenceServices, namespace, name), requestCap(env));
  } catch (error) {
    if (error instanceof DeadlineExceededError && deadline.remainingMs() <= 0) {
      throw new CliError(CliMessage.deadlineExceeded, ExitCode.error, { cause: error });
    }
    throw requestFailed(error, { verb: 'get', resource: INFERENCE_SERVICE_RESOURCE, name });
  }
}

/** The fixed access message, with the server's refusal (403, 404) on the line under it. */
export function requestFailed(error: unknown, request: { verb: string; resource: string; name: string }): CliError {
  const detail = describeApiRefusal(error, request);
  return new CliError(CliMessage.requestFailed, ExitCode.error, { cause: error, ...(detail ? { detail } : {}) });
}

/** Shared refusals of every guarded action: an identity the patch can test, and a live object. */
export function checkTargetIdentity(object: KubeObject, namespace: string, name: string): void {
  const meta = object.metadata;
  if (
    !meta ||
    meta.name !== name ||
    meta.namespace !== namespace ||
    !meta.uid ||
    !meta.resourceVersion ||
    typeof meta.generation !== 'number'
  ) {
    throw new CliError(CliMessage.actionRefused('target identity is missing or unsafe'));
  }
  if (meta.deletionTimestamp) throw new CliError(CliMessage.actionRefused('target is being deleted'));
  if (Object.keys(meta.annotations ?? {}).length > 256) {
    throw new CliError(CliMessage.actionRefused('safety inputs exceed inspection bounds'));
  }
}

export interface Preview {
  title: string;
  rows: Array<[string, string]>;
  warnings: string[];
}

const PREVIEW_WIDTH = 56;

/** Every value shows in full: a long one continues on `(continued)` rows. */
export function formatPreview(preview: Preview): string {
  const rows: Array<[string, string]> = [];
  for (const [field, raw] of preview.rows) {
    let value = raw === '' ? '<absent>' : raw;
    let label = field;
    while (value.length > PREVIEW_WIDTH) {
      rows.push([label, value.slice(0, PREVIEW_WIDTH)]);
      value = value.slice(PREVIEW_WIDTH);
      label = '(continued)';
    }
    rows.push([label, value]);
  }
  return `${preview.title}\n${formatTable(['FIELD', 'VALUE'], rows)}${preview.warnings.map((line) => `${line}\n`).join('')}`;
}

/** Asks on stderr; only `y` or `yes`, in any case, on a terminal goes ahead. */
export async function confirmAction(env: CommandEnv, deadline: Deadline, yes: boolean): Promise<void> {
  if (yes) return;
  env.io.stderr.write(CONFIRM_PROMPT);
  if (!env.io.stdin.isTTY) {
    env.io.stderr.write('\n');
    throw new CliError(CliMessage.notConfirmed);
  }
  let answer: string | null;
  try {
    answer = await deadline.run(() => env.io.stdin.readLine(), 0);
  } catch (error) {
    env.io.stderr.write('\n');
    throw new CliError(CliMessage.deadlineExceeded, ExitCode.error, { cause: error });
  }
  const normalized = (answer ?? '').trim().toLowerCase();
  if (normalized !== 'y' && normalized !== 'yes') throw new CliError(CliMessage.notConfirmed);
}

/** What every guarded command is given: its target, and how to run and report. */
export interface GuardedActionOptions {
  name: string;
  namespace: string;
  dryRun: DryRunMode;
  yes: boolean;
  output: OutputFormat;
}

/** One annotation a guarded command sets, and how its outcome is reported. */
export interface GuardedAnnotation {
  key: string;
  value: string;
  /** Also test the annotation's old value, so a concurrent writer's value is not overwritten. */
  testOldValue: boolean;
  refreshCommand: string;
  outcomeUnknownMessage: string;
}

/** Sets one annotation on `object` with the guarded patch; see `sendGuardedPatch`. */
export function sendGuardedAnnotation(
  env: CommandEnv,
  deadline: Deadline,
  object: KubeObject,
  options: Pick<GuardedActionOptions, 'name' | 'namespace' | 'dryRun'>,
  annotation: GuardedAnnotation,
): Promise<boolean> {
  return sendGuardedPatch(env, deadline, {
    namespace: options.namespace,
    name: options.name,
    patch: buildAnnotationPatch(object, annotation.key, annotation.value, { testOldValue: annotation.testOldValue }),
    dryRun: options.dryRun,
    refreshCommand: annotation.refreshCommand,
    outcomeUnknownMessage: annotation.outcomeUnknownMessage,
    annotation: { key: annotation.key, value: annotation.value },
  });
}

export interface GuardedPatchRequest {
  namespace: string;
  name: string;
  patch: JsonPatchOperation[];
  dryRun: DryRunMode;
  /** `runtime effective` or `rollout explain`: what to refresh after a conflict. */
  refreshCommand: string;
  /** The message when the API server may or may not have stored the patch. */
  outcomeUnknownMessage: string;
  /** The annotation the patch sets, checked in the response. */
  annotation: { key: string; value: string };
}

/**
 * Sends the patch (not for a client dry run). Returns whether it was sent. A 409, or a 422
 * from a failed `test`, is a conflict (exit 3); a timeout, lost connection or server error
 * after sending leaves the outcome unknown; any other refusal is the fixed access message.
 */
export async function sendGuardedPatch(env: CommandEnv, deadline: Deadline, request: GuardedPatchRequest): Promise<boolean> {
  if (request.dryRun === 'client') return false;
  let response: KubeObject;
  try {
    response = await deadline.run(
      () =>
        env.client.patch<KubeObject>(InferenceServices, request.namespace, request.name, request.patch, {
          type: 'json',
          ...(request.dryRun === 'server' ? { dryRun: 'All' as const } : {}),
        }),
      requestCap(env),
    );
  } catch (error) {
    throw classifyPatchError(error, request);
  }
  if (response?.metadata?.annotations?.[request.annotation.key] !== request.annotation.value) {
    throw new CliError(request.outcomeUnknownMessage);
  }
  return true;
}

const FAILED_TEST = /rejected our request due to an error in our request|\btest(ing)?\b[^]*\bfail|\bfail[^]*\btest\b/i;

function classifyPatchError(error: unknown, request: GuardedPatchRequest): CliError {
  if (error instanceof ConflictError) {
    return new CliError(CliMessage.guardedRejected(request.refreshCommand), ExitCode.conflict, { cause: error });
  }
  if (error instanceof InvalidInputError && FAILED_TEST.test(describe(error))) {
    return new CliError(CliMessage.guardedRejected(request.refreshCommand), ExitCode.conflict, { cause: error });
  }
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || !(error instanceof ControlPlaneError)) {
    return new CliError(request.outcomeUnknownMessage, ExitCode.error, { cause: error });
  }
  return requestFailed(error, { verb: 'patch', resource: INFERENCE_SERVICE_RESOURCE, name: request.name });
}

function describe(error: Error): string {
  const cause = error.cause instanceof Error ? ` ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

export function parseDryRun(raw: string | undefined): DryRunMode {
  if (raw === undefined || raw === '' || raw === 'none') return 'none';
  if (raw === 'client' || raw === 'server') return raw;
  throw new CliError(`invalid argument "${raw}" for "--dry-run" flag: must be none, client or server`);
}
