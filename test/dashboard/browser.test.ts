/**
 * `kubectl ome dashboard` in a real headless Chromium, against the control plane as
 * `npm start` runs it: a pinned InferenceService drifts (RevisionMismatch) and a canary
 * waits at its first manual gate; the rendered page shows both, and its screenshot is
 * kept under reports/dashboard/. Then the canary is promoted and a page served the view
 * from before updates itself through its script (the live update).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, sh, shOk, startRolloutWalk, type RolloutWalk } from '../e2e/rollout-support';

const ROOT = resolve(__dirname, '../..');
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT_DIR = join(ROOT, 'reports', 'dashboard');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const runtimeArgs = (memFrac: string) => ({ runner: { name: 'ome-container', image: 'docker.io/lmsysorg/sglang:v0.5.5', args: [`--mem-frac=${memFrac}`] } });

const manifests = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } },
  {
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name: 'srt', namespace: 'prod' },
    spec: { supportedModelFormats: [{ modelFormat: { name: 'safetensors' }, autoSelect: true }], engineConfig: runtimeArgs('0.9') },
  },
  {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'gated', namespace: 'prod' },
    spec: {
      model: { name: 'chat-model' },
      runtime: { name: 'srt', kind: 'ServingRuntime' },
      engine: { minReplicas: 2, maxReplicas: 2 },
      rollout: { groups: [{ components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }, { capacity: '100%', traffic: 100, pause: {} }] } }] },
    },
  },
  {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'pinned-chat', namespace: 'prod' },
    spec: { model: { name: 'chat-model' }, runtime: { name: 'srt', kind: 'ServingRuntime', autoSync: false }, engine: { minReplicas: 1, maxReplicas: 1 } },
  },
];

let walk: RolloutWalk;
let dashboard: ChildProcess | undefined;
let url = '';
let profileDir = '';

/** `kubectl ome dashboard` as the user runs it; resolves with the URL it prints. */
async function startDashboard(): Promise<string> {
  const child = spawn(
    'kubectl',
    ['ome', 'dashboard', '--table', walk.plane.tableName, '--dynamodb-endpoint', walk.plane.dynamoDbEndpoint, '--refresh', '1s'],
    {
      cwd: walk.workDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: walk.kubeconfigPath, PATH: `${join(ROOT, 'bin')}${delimiter}${process.env.PATH ?? ''}` },
    },
  );
  dashboard = child;
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((ready, fail) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const found = /^Serving the fleet dashboard on (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/.exec(line);
      if (found) ready(found[1] as string);
    });
    child.once('exit', (code) => fail(new Error(`kubectl ome dashboard exited ${code}: ${errors}`)));
  });
}

/** Headless Chromium, as the docs show it; `mode` is --dump-dom (the DOM after the script ran) or --screenshot=FILE. */
function chromium(mode: string, target: string): Promise<string> {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profileDir}`,
    '--window-size=1280,900',
    '--virtual-time-budget=5000',
    mode,
    target,
  ];
  return new Promise((done, fail) => {
    execFile(CHROMIUM, args, { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => (error ? fail(new Error(`chromium failed: ${error.message}\n${stderr}`)) : done(stdout)));
  });
}

/** The text of the table cells of the row naming `name` in the table with `id`, from a dumped DOM. */
function rowOf(dom: string, tableId: string, name: string): string[] {
  const table = new RegExp(`<table id="${tableId}">([\\s\\S]*?)</table>`).exec(dom)?.[1] ?? '';
  for (const row of table.split('<tr>')) {
    const cells = [...row.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((match) => match[1] as string);
    if (cells.includes(name)) return cells;
  }
  return [];
}

const gatedStatus = async () =>
  JSON.parse(await shOk(walk, 'kubectl get inferenceservice gated -n prod -o json')) as { status: { canary?: { currentStep?: number }; components?: { engine?: { rolloutPhase?: string } } } };

beforeAll(async () => {
  expect(existsSync(CHROMIUM), 'Chromium is missing: apt-get install -y chromium').toBe(true);
  profileDir = await mkdtemp(join(tmpdir(), 'ome-dashboard-chromium-'));
  walk = await startRolloutWalk();
  await writeFile(join(walk.workDir, 'fleet.yaml'), manifests.map((manifest) => stringify(manifest)).join('---\n'));
  await shOk(walk, 'kubectl apply -f fleet.yaml');
  await eventually('the first revision deployed', () => shOk(walk, 'kubectl get deployment gated-engine -n prod -o jsonpath={.status.readyReplicas}').catch(() => ''), (out) => out === '2');
  await eventually('pinned-chat pinned', () => shOk(walk, 'kubectl get inferenceservice pinned-chat -n prod -o jsonpath={.status.pinnedRevisionName}'), (out) => out !== '');
  await shOk(walk, `kubectl patch servingruntime srt -n prod --type=json -p '[{"op":"replace","path":"/spec/engineConfig/runner/args/0","value":"--mem-frac=0.85"}]'`);
  await eventually('the canary paused at its first gate', gatedStatus, (isvc) => isvc.status.components?.engine?.rolloutPhase === 'Paused' && isvc.status.canary?.currentStep === 0);
  await eventually(
    'pinned-chat drifted',
    () => shOk(walk, `kubectl get inferenceservice pinned-chat -n prod -o jsonpath='{.status.conditions[?(@.type=="RuntimeDrifted")].reason}'`),
    (reason) => reason === 'RevisionMismatch',
  );
  url = await startDashboard();
}, 240_000);

afterAll(async () => {
  if (dashboard?.pid && dashboard.exitCode === null) {
    const exited = new Promise((done) => dashboard?.once('exit', done));
    process.kill(-dashboard.pid, 'SIGINT');
    await exited;
  }
  await walk?.stop();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
}, 60_000);

describe('kubectl ome dashboard in headless Chromium', { timeout: 180_000 }, () => {
  it('shows the drifting InferenceService under its reason and the canary at its step', async () => {
    const dom = await chromium('--dump-dom', url);
    // The script ran and its first update arrived.
    expect(dom).toContain('live, updated every 1s');
    expect(dom).toMatch(/<h3 class="reason">RevisionMismatch<\/h3>\s*<table id="drift-RevisionMismatch">/);
    expect(rowOf(dom, 'drift-RevisionMismatch', 'pinned-chat').slice(0, 3)).toEqual(['local', 'prod', 'pinned-chat']);
    const canary = rowOf(dom, 'rollouts', 'gated');
    expect(canary.slice(0, 3)).toEqual(['local', 'prod', 'gated']);
    expect(canary[4]).toBe('#0 Canary engine step 1/2 50% Paused');
    expect(canary[6]).toMatch(/^(none|False\/InSync)$/);
    const clusterRow = rowOf(dom, 'clusters', 'local');
    expect(clusterRow[1]).toBe('standalone');
    expect(clusterRow[3]).toMatch(/^(\d+ms|(\d+h)?(\d+m)?\d+s)$/);
    expect(rowOf(dom, 'pins', '1').length).toBeGreaterThan(0);
  });

  it('saves a screenshot of the page as a PNG under reports/dashboard/', async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    const file = join(SCREENSHOT_DIR, 'fleet.png');
    await rm(file, { force: true });
    await chromium(`--screenshot=${file}`, url);
    const png = await readFile(file);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect((await stat(file)).size).toBeGreaterThan(20_000);
  });

  it('a page served the view from before a promotion updates itself to the new step', async () => {
    const promoted = await sh(walk, 'kubectl ome rollout promote gated -n prod --yes');
    expect(promoted.code, promoted.stderr).toBe(0);
    await eventually('the canary paused at its last gate', gatedStatus, (isvc) => isvc.status.components?.engine?.rolloutPhase === 'Paused' && isvc.status.canary?.currentStep === 1);
    // The server reads the fleet only while a page listens: what it serves now is the view
    // from before the promotion, which the page's script must replace from the stream.
    const served = await (await fetch(url)).text();
    expect(rowOf(served, 'rollouts', 'gated')[4]).toBe('#0 Canary engine step 1/2 50% Paused');
    const dom = await chromium('--dump-dom', url);
    expect(rowOf(dom, 'rollouts', 'gated')[4]).toBe('#0 Canary engine step 2/2 100% Paused');
  });

  it('refuses the page and the event stream without the token', async () => {
    const base = url.replace(/\?token=.*$/, '');
    const page = await fetch(base);
    expect(page.status).toBe(401);
    const events = await fetch(`${base}events`);
    expect(events.status).toBe(401);
    expect(await events.text()).not.toContain('gated');
  });
});
