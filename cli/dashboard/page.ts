/**
 * The dashboard's HTML: the page shell with its small script, and the fleet fragment
 * rendered from a snapshot. Every value passes through escapeHtml (object names are user
 * input); the script only swaps in fragments this module rendered, so no value reaches
 * the DOM unescaped. Served from memory: no build step, no framework.
 */
import type { FleetSnapshot, RolloutRow } from './gather';

/** The SSE event carrying a fresh fragment (`/events`, for clients other than the page). */
export const SNAPSHOT_EVENT = 'fleet';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (character) => ESCAPES[character] ?? character);
}

/** Go-style duration text for a lag: `1m5s`, `250ms`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return `${hours ? `${hours}h` : ''}${hours || minutes ? `${minutes}m` : ''}${seconds}s`;
}

function table(id: string, headers: string[], rows: unknown[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty" id="${id}-empty">${escapeHtml(empty)}</p>`;
  const head = headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table id="${id}"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function section(title: string, body: string, truncated: number | undefined): string {
  const note = truncated ? `<p class="note">${escapeHtml(`${truncated} more not shown`)}</p>` : '';
  return `<section><h2>${escapeHtml(title)}</h2>${body}${note}</section>`;
}

function rolloutCells(row: RolloutRow): unknown[] {
  const groups = row.groups
    .map((group) => [`#${group.index} ${group.strategy || 'Unknown'} ${group.components}`, group.step, group.trafficWeight === null ? '' : `${group.trafficWeight}%`, group.phase].filter(Boolean).join(' '))
    .join('; ');
  return [row.cluster, row.namespace, row.name, row.runID, groups, row.hold || 'none', row.planDrift || 'none', row.openedAt];
}

/** The fleet fragment: the page's `<main>` content for one snapshot. */
export function renderFleet(snapshot: FleetSnapshot): string {
  const driftReasons = [...new Set(snapshot.drift.map((row) => row.reason))];
  const driftBody =
    driftReasons.length === 0
      ? `<p class="empty" id="drift-empty">No InferenceService reports RuntimeDrifted.</p>`
      : driftReasons
          .map(
            (reason) =>
              `<h3 class="reason">${escapeHtml(reason)}</h3>` +
              table(
                `drift-${escapeHtml(reason)}`,
                ['CLUSTER', 'NAMESPACE', 'NAME', 'MESSAGE'],
                snapshot.drift.filter((row) => row.reason === reason).map((row) => [row.cluster, row.namespace, row.name, row.message]),
                '',
              ),
          )
          .join('\n');
  return [
    `<p class="stamp">Collected <time id="collected-at">${escapeHtml(snapshot.collectedAt)}</time></p>`,
    section(
      'Clusters',
      table(
        'clusters',
        ['CLUSTER', 'MODE', 'SERVER', 'FORWARDER LAG', 'LAST CHECKPOINT', 'LAST FORWARDER ERROR', 'INFERENCESERVICES', 'READ ERROR'],
        snapshot.clusters.map((row) => [
          row.id,
          row.mode,
          row.server,
          row.lagMs === null ? 'no checkpoint yet' : durationText(row.lagMs),
          row.lastCheckpointAt ?? '',
          row.lastError ? `${row.lastError.at} ${row.lastError.message}` : 'none',
          row.inferenceServices,
          row.readError ?? '',
        ]),
        'No cluster is registered.',
      ),
      snapshot.truncated.clusters,
    ),
    section(
      'Fleet sync waves',
      snapshot.wavesError
        ? `<p class="empty" id="waves-error">The waves could not be read: ${escapeHtml(snapshot.wavesError)}</p>`
        : table(
            'waves',
            ['WAVE', 'RUNTIME', 'STATE', 'ACKNOWLEDGED', 'STAGES (ACKNOWLEDGED, SYNCING)', 'PACE', 'WAITING FOR'],
            snapshot.waves.map((row) => [
              row.id,
              row.runtime,
              row.state,
              row.acknowledged,
              row.stages.map((stage) => `${stage.stage}. ${stage.selector ? `${stage.selector} ` : ''}${stage.acknowledged}/${stage.clusters}${stage.syncing.length > 0 ? ` (syncing ${stage.syncing.join(', ')})` : ''}`).join('; '),
              row.pace || 'one at a time',
              row.waiting,
            ]),
            'No sync wave is running or ended within a day.',
          ),
      snapshot.truncated.waves,
    ),
    section('InferenceServices by drift reason', driftBody, snapshot.truncated.drift),
    section(
      'Active rollout runs',
      table('rollouts', ['CLUSTER', 'NAMESPACE', 'NAME', 'RUN', 'GROUPS (STEP, TRAFFIC, PHASE)', 'HOLD', 'PLAN DRIFT', 'OPENED'], snapshot.rollouts.map(rolloutCells), 'No rollout run is active.'),
      snapshot.truncated.rollouts,
    ),
    section(
      'Pinned revisions',
      table('pins', ['CLUSTER', 'REVISION', 'INFERENCESERVICES'], snapshot.pins.map((row) => [row.cluster, row.revision, row.count]), 'No InferenceService is pinned.'),
      snapshot.truncated.pins,
    ),
    section(
      'Revision GC backlog',
      table(
        'gc',
        ['CLUSTER', 'NAMESPACE', 'REVISIONS', 'MARKED (gc-eligible-since)', 'BEYOND RETENTION', 'DUE FOR DELETION'],
        snapshot.gc.map((row) => [row.cluster, row.namespace, row.revisions, row.marked, row.beyondRetention, row.due]),
        'No cluster could be read.',
      ),
      snapshot.truncated.gc,
    ),
  ].join('\n');
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f24;background:#fafbfc}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}h3{font-size:1em;margin:.8em 0 .3em;color:#9a3412}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #d0d7de;padding:.3em .5em;text-align:left;vertical-align:top;word-break:break-all}
th{background:#f0f3f6;font-weight:600}.empty,.stamp,.note{color:#57606a}#status{font-size:.9em;color:#57606a}#status.stale{color:#b42318}
`;

/**
 * The whole page with the last fragment in place. The script fetches `fragment` with the
 * token the page was opened with, at once and every refresh, and swaps `<main>` for it;
 * with no script the page still shows the snapshot it was served with.
 */
export function renderPage(fragment: string, nonce: string, refreshSeconds: number): string {
  // Polling rather than EventSource: one request per update works through every proxy
  // and in a headless browser's virtual time, and stops with the page.
  const script = `
(() => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const main = document.getElementById('fleet');
  const status = document.getElementById('status');
  const load = async () => {
    try {
      const response = await fetch('fragment?token=' + encodeURIComponent(token), { cache: 'no-store' });
      if (!response.ok) throw new Error(String(response.status));
      const update = await response.json();
      main.innerHTML = update.html;
      status.textContent = 'live, updated every ${refreshSeconds}s';
      status.className = '';
    } catch (error) {
      status.textContent = 'disconnected: the view is stale';
      status.className = 'stale';
    } finally {
      setTimeout(load, ${refreshSeconds * 1000});
    }
  };
  load();
})();
`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>OME fleet</title><style nonce="${escapeHtml(nonce)}">${STYLE}</style></head>
<body><header><h1>OME fleet</h1><span id="status">connecting…</span></header>
<main id="fleet">
${fragment}
</main>
<script nonce="${escapeHtml(nonce)}">${script}</script>
</body></html>
`;
}
