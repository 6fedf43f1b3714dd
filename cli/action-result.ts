/**
 * The ActionResult every guarded command prints to stdout: a FIELD/VALUE table whose values
 * are cut at 56 characters, or the whole result with `-o json|yaml`.
 */
import { boundCell, formatStructured, formatTable, type OutputFormat } from './output';

export const REPORT_API_VERSION = 'cli.ome.io/v1alpha1';

export type DryRunMode = 'none' | 'client' | 'server';

export interface ActionTarget {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

export interface RolloutActionDetails {
  runID: string;
  pinnedPlanDigest: string;
  requestedPlanDigest: string;
  groupCount: number;
}

export interface ActionResult {
  apiVersion: typeof REPORT_API_VERSION;
  kind: 'ActionResult';
  collectedAt: string;
  action: string;
  target: ActionTarget;
  dryRun: DryRunMode;
  requestID?: string;
  revisionHash?: string;
  accepted: boolean;
  applied: boolean;
  message?: string;
  followUp?: string;
  rollout?: RolloutActionDetails;
}

export const ResultMessage = {
  clientDryRun: 'Validated locally; no patch sent.',
  serverDryRun: 'API dry-run accepted; no changes persisted.',
  syncAccepted: 'API accepted annotation request; consumption and convergence not observed.',
  repinAccepted: 'API accepted repin annotation; controller consumption and plan replacement were not observed.',
  promoteAccepted: 'API accepted annotation request; convergence not observed.',
} as const;

const HINT = 'Use -o json or -o yaml for full values.';
const CELL_WIDTH = 56;

/** RFC 3339 in UTC without fractional seconds, as Kubernetes prints times. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Builds a result in the field order the JSON shows; `accepted` and `applied` follow the dry-run mode. */
export function buildActionResult(input: {
  action: string;
  target: ActionTarget;
  dryRun: DryRunMode;
  collectedAt: Date;
  sent: boolean;
  requestID?: string;
  revisionHash?: string;
  message: string;
  followUp: string;
  rollout?: RolloutActionDetails;
}): ActionResult {
  const result: ActionResult = {
    apiVersion: REPORT_API_VERSION,
    kind: 'ActionResult',
    collectedAt: formatTimestamp(input.collectedAt),
    action: input.action,
    target: { ...input.target },
    dryRun: input.dryRun,
    accepted: input.sent && input.dryRun !== 'client',
    applied: input.sent && input.dryRun === 'none',
    message: input.message,
    followUp: input.followUp,
  };
  const ordered: ActionResult = {
    apiVersion: result.apiVersion,
    kind: result.kind,
    collectedAt: result.collectedAt,
    action: result.action,
    target: result.target,
    dryRun: result.dryRun,
    ...(input.requestID ? { requestID: input.requestID } : {}),
    ...(input.revisionHash ? { revisionHash: input.revisionHash } : {}),
    accepted: result.accepted,
    applied: result.applied,
    message: result.message,
    followUp: result.followUp,
    ...(input.rollout ? { rollout: { ...input.rollout } } : {}),
  };
  return ordered;
}

function yesNo(value: boolean): string {
  return value ? 'Yes' : 'No';
}

function targetName(target: ActionTarget): string {
  return [target.kind, target.namespace, target.name].filter((part) => part !== '').join('/');
}

/** The table rows; `wide` adds the target's uid and resourceVersion to a rollout result. */
export function actionResultRows(result: ActionResult, wide: boolean): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['action', result.action],
    ['target', targetName(result.target)],
  ];
  if (result.rollout) {
    if (wide) rows.push(['uid', result.target.uid], ['resource-version', result.target.resourceVersion]);
    rows.push(
      ['dry-run', result.dryRun],
      ['accepted', yesNo(result.accepted)],
      ['applied', yesNo(result.applied)],
      ['run-id', result.rollout.runID],
      ['pinned-plan-digest', result.rollout.pinnedPlanDigest],
      ['requested-plan-digest', result.rollout.requestedPlanDigest],
      ['group-count', String(result.rollout.groupCount)],
    );
  } else {
    rows.push(
      ['dry-run', result.dryRun],
      ['accepted', yesNo(result.accepted)],
      ['applied', yesNo(result.applied)],
      ['request-id', result.requestID ?? ''],
      ['revision-hash', result.revisionHash ?? ''],
    );
  }
  rows.push(['message', result.message ?? ''], ['follow-up', result.followUp ?? ''], ['hint', HINT]);
  return rows.map(([field, value]) => [field, value === '' ? '-' : boundCell(value, CELL_WIDTH)]);
}

export function formatActionResult(result: ActionResult, format: OutputFormat): string {
  if (format === 'json' || format === 'yaml') return formatStructured(result, format);
  return formatTable(['FIELD', 'VALUE'], actionResultRows(result, format === 'wide'));
}
