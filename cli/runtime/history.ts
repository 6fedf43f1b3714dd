/**
 * `kubectl ome runtime history`: the revisions of an InferenceService's runtime, the
 * ControllerRevisions labeled with its name in OME's namespace, newest first, with the
 * one in use marked. `-o wide` prints the full names that `spec.runtime.revision` takes.
 */
import { createHash } from 'node:crypto';

import type { KubeObject } from '../../shared/ports/cluster';
import { Label } from '../../shared/domain/vocabulary';
import { REPORT_API_VERSION, formatTimestamp } from '../action-result';
import { checkRevision, runtimeFullName, type RuntimeEvidence } from '../domain/runtime';
import { withTimeout, type CommandEnv } from '../env';
import type { InferenceServiceObject } from '../isvc';
import { formatStructured, formatTable, type OutputFormat } from '../output';
import { readRuntimeEvidence } from '../read';
import { ControllerRevisions } from '../resources';

export interface RuntimeHistoryOptions {
  name: string;
  namespace: string;
  omeNamespace: string;
  output: OutputFormat;
}

const PAGE_SIZE = 500;
const MAX_PAGES = 2;

type Revision = KubeObject & { data?: unknown; revision?: unknown };

export interface HistoryEntry {
  name: string;
  created: string;
  hash: string;
  roles: { active: boolean; requested: boolean; reported: boolean };
  source: string;
  consistency: 'Consistent' | 'Inconsistent' | 'Unknown';
  relation: 'MatchesLive' | 'DiffersFromLive' | 'AmbiguousWithLive' | 'Unknown';
  issues: string[];
}

export interface HistoryWindow {
  observation: 'Complete' | 'Partial' | 'Unavailable';
  completeness: 'RetentionBounded' | 'Incomplete';
  pagesSeen: number;
  requests: number;
}

export async function runRuntimeHistory(env: CommandEnv, options: RuntimeHistoryOptions): Promise<number> {
  const { isvc, evidence } = await readRuntimeEvidence(env, options);
  const { revisions, window, reportIssues } = await listRevisions(env, options.omeNamespace, evidence);
  const entries = revisions.map((revision) => describeRevision(revision, isvc, evidence)).sort(newestFirst);
  env.io.stdout.write(formatHistory(options, isvc, window, entries, reportIssues, env.now()));
  return 0;
}

async function listRevisions(
  env: CommandEnv,
  omeNamespace: string,
  evidence: RuntimeEvidence,
): Promise<{ revisions: Revision[]; window: HistoryWindow; reportIssues: string[] }> {
  const window: HistoryWindow = { observation: 'Complete', completeness: 'RetentionBounded', pagesSeen: 0, requests: 0 };
  if (!evidence.source) return { revisions: [], window: { ...window, observation: 'Unavailable', completeness: 'Incomplete' }, reportIssues: [] };
  const revisions: Revision[] = [];
  let next: string | undefined;
  try {
    do {
      window.requests += 1;
      const page = await withTimeout(
        env.client.list<Revision>(ControllerRevisions, {
          namespace: omeNamespace,
          labelSelector: `${Label.runtimeOf}=${evidence.source.runtimeName}`,
          limit: PAGE_SIZE,
          ...(next ? { continue: next } : {}),
        }),
        env.requestTimeoutMs,
      );
      window.pagesSeen += 1;
      revisions.push(...page.items);
      next = page.continue;
    } while (next && window.requests < MAX_PAGES);
  } catch {
    return { revisions, window: { ...window, observation: revisions.length ? 'Partial' : 'Unavailable', completeness: 'Incomplete' }, reportIssues: ['HistoryUnavailable'] };
  }
  if (next) return { revisions, window: { ...window, observation: 'Partial', completeness: 'Incomplete' }, reportIssues: ['HistoryTruncated'] };
  return { revisions, window, reportIssues: [] };
}

function describeRevision(revision: Revision, isvc: InferenceServiceObject, evidence: RuntimeEvidence): HistoryEntry {
  const name = revision.metadata.name;
  const check = checkRevision(revision, evidence.source);
  const labels = revision.metadata.labels ?? {};
  const kind = labels[Label.runtimeOfKind] || 'ClusterServingRuntime';
  const sourceNamespace = labels[Label.runtimeOfNamespace] ?? '';
  let relation: HistoryEntry['relation'] = 'Unknown';
  const live = evidence.live.hash;
  if (live && check.hash) {
    if (live.full === check.hash.full) relation = 'MatchesLive';
    else relation = live.short === check.hash.short ? 'AmbiguousWithLive' : 'DiffersFromLive';
  }
  return {
    name,
    created: revision.metadata.creationTimestamp ?? '',
    hash: check.hash?.short ?? labels[Label.revisionHash] ?? '',
    roles: {
      active: evidence.pinMode !== 'AutoSync' && evidence.active.revision === name,
      requested: isvc.spec?.runtime?.revision === name,
      reported: isvc.status?.pinnedRevisionName === name,
    },
    source: runtimeFullName({ kind: kind === 'ServingRuntime' ? 'ServingRuntime' : 'ClusterServingRuntime', namespace: sourceNamespace, runtimeName: labels[Label.runtimeOf] ?? '' }),
    consistency: check.hash ? (check.issues.length === 0 ? 'Consistent' : 'Inconsistent') : 'Unknown',
    relation,
    issues: check.issues,
  };
}

function newestFirst(a: HistoryEntry, b: HistoryEntry): number {
  return b.created.localeCompare(a.created) || a.name.localeCompare(b.name);
}

/** A name that fits in 14 characters, or its first two, `...`, `#` and 8 hex of a digest of it. */
export function shortRevisionName(name: string): string {
  if (name.length <= 14) return name;
  return `${name.slice(0, 2)}...#${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}

/** `YY-MM-DDTHH:MMZ`. */
export function shortTime(timestamp: string): string {
  const match = /^\d{2}(\d{2}-\d{2}-\d{2}T\d{2}:\d{2})/.exec(timestamp);
  return match ? `${match[1]}Z` : '-';
}

function count(n: number): string {
  return n > 9 ? '9+' : String(n);
}

function roleLetters(roles: HistoryEntry['roles']): string {
  return `${roles.active ? 'A' : ''}${roles.requested ? 'Q' : ''}${roles.reported ? 'R' : ''}H`;
}

function roleWords(roles: HistoryEntry['roles']): string {
  return [roles.active && 'Active', roles.requested && 'Requested', roles.reported && 'Reported', 'History'].filter(Boolean).join(',');
}

function formatHistory(
  options: RuntimeHistoryOptions,
  isvc: InferenceServiceObject,
  window: HistoryWindow,
  entries: HistoryEntry[],
  reportIssues: string[],
  now: Date,
): string {
  if (options.output === 'json' || options.output === 'yaml') {
    return formatStructured(
      {
        apiVersion: REPORT_API_VERSION,
        kind: 'RuntimeHistoryReport',
        metadata: { namespace: isvc.metadata.namespace, name: isvc.metadata.name },
        collectedAt: formatTimestamp(now),
        content: { window, revisions: entries, issues: reportIssues },
      },
      options.output,
    );
  }
  const windowText = `${window.observation[0]}/${window.completeness === 'RetentionBounded' ? 'B' : 'I'}/${window.pagesSeen}/${window.requests}`;
  if (options.output === 'wide') {
    const rows = entries.map((entry) => [
      window.observation,
      window.completeness,
      `${window.pagesSeen}/${window.requests}`,
      entry.name,
      entry.created,
      entry.hash,
      roleWords(entry.roles),
      entry.source,
      entry.consistency,
      entry.relation,
      entry.issues.join(','),
      reportIssues.join(','),
    ]);
    if (rows.length === 0) rows.push([window.observation, window.completeness, `${window.pagesSeen}/${window.requests}`, '', '', '', '', '', '', '', '', reportIssues.join(',')]);
    return formatTable(
      ['OBSERVATION', 'COMPLETENESS', 'PAGES', 'REVISION', 'CREATED', 'HASH', 'ROLES', 'SOURCE', 'CONSISTENCY', 'RELATION', 'REVISION-ISSUES', 'REPORT-ISSUES'],
      rows,
    );
  }
  const relationText = { MatchesLive: 'MATCH', DiffersFromLive: 'DIFF', AmbiguousWithLive: 'AMB', Unknown: '?' } as const;
  const checkText = { Consistent: 'OK', Inconsistent: 'BAD', Unknown: '?' } as const;
  const rows = entries.map((entry) => [
    windowText,
    shortRevisionName(entry.name),
    shortTime(entry.created),
    roleLetters(entry.roles),
    checkText[entry.consistency],
    relationText[entry.relation],
    `R${count(entry.issues.length)}/G${count(reportIssues.length)}`,
  ]);
  if (rows.length === 0) rows.push([windowText, '', '', '', '', '', `R0/G${count(reportIssues.length)}`]);
  return formatTable(['WINDOW', 'REVISION', 'CREATED', 'ROLES', 'CHECK', 'LIVE', 'ISSUES'], rows);
}
