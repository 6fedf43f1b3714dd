/**
 * Fault case 26: 1,000 unauthenticated requests a second at the webhook must not refuse a
 * single legitimate admission. The flood comes from a thread of its own, at the front door
 * `npm start` serves (the stack's CloudFront Function, run locally), while the real
 * kubectl creates InferenceServices whose reviews the cluster's API server sends through
 * the same door. The function behind it keeps serverless.yml's reserved concurrency: the
 * flood must never reach it, so it never takes a slot a review needs.
 */
import { execFile } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, START_TIMEOUT_MS, seedManifests, startObservedControlPlane, type ObservedControlPlane } from '../control-plane/support';
import { ON_SERVER } from '../support/test-cluster';

/** Requests a second the flood offers, and for how long. */
const FLOOD_RATE = 1_000;
const FLOOD_SECONDS = 8;
/** Legitimate admissions made during the flood. */
const LEGITIMATE = 12;

interface FloodReport {
  sent: number;
  answered: number;
  errors: number;
  byStatus: Record<string, number>;
}

/**
 * Sends `rate` requests a second for `seconds`, in 10 ms ticks, and counts the answers by
 * status. Half carry a well-shaped route with a random token (the door must look each up),
 * a quarter another cluster id, a quarter a path of no route at all.
 */
const FLOOD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const https = require('node:https');
const { randomBytes } = require('node:crypto');
const { url, rate, seconds, ca } = workerData;
const target = new URL(url);
const client = target.protocol === 'https:' ? https : http;
const agent = new client.Agent({ keepAlive: true, maxSockets: 64 });
const report = { sent: 0, answered: 0, errors: 0, byStatus: {} };
const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'flood' } });
function pathOf(n) {
  const token = randomBytes(32).toString('base64url');
  if (n % 4 === 0) return '/clusters/local/' + token + '/validate/inferenceservice?timeout=10s';
  if (n % 4 === 1) return '/clusters/local/' + token + '/validate/controllerrevision?timeout=10s';
  if (n % 4 === 2) return '/clusters/cluster-' + n + '/' + token + '/validate/inferenceservice';
  return '/validate/' + n;
}
function send() {
  const n = report.sent++;
  const request = client.request({ host: target.hostname, port: target.port, path: pathOf(n), method: 'POST', agent, ca,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
    report.byStatus[response.statusCode] = (report.byStatus[response.statusCode] || 0) + 1;
    response.resume();
    response.on('end', () => { report.answered++; });
  });
  request.on('error', () => { report.errors++; });
  request.end(body);
}
const perTick = rate / 100;
const ticks = seconds * 100;
let tick = 0;
const started = Date.now();
function next() {
  if (tick >= ticks) {
    // Every request answered (or failed), or 30 s more at most.
    const deadline = Date.now() + 30000;
    const drained = () => report.answered + report.errors >= report.sent || Date.now() > deadline;
    const wait = () => (drained() ? parentPort.postMessage(report) : setTimeout(wait, 50));
    wait();
    return;
  }
  // Catch up to the schedule after a late tick, so the offered rate holds.
  const due = Math.min(ticks, Math.floor((Date.now() - started) / 10) + 1);
  while (tick < due) { for (let i = 0; i < perTick; i++) send(); tick++; }
  setTimeout(next, 10);
}
next();
`;

function flood(url: string, caData: string | undefined): Promise<FloodReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(FLOOD_SOURCE, {
      eval: true,
      workerData: { url, rate: FLOOD_RATE, seconds: FLOOD_SECONDS, ...(caData ? { ca: Buffer.from(caData, 'base64').toString('utf8') } : {}) },
    });
    worker.once('message', (report: FloodReport) => {
      void worker.terminate();
      resolve(report);
    });
    worker.once('error', reject);
  });
}

function kubectlCreate(kubeconfig: string, manifest: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, 'create', '-f', '-'], { timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
    });
    child.stdin?.end(manifest);
  });
}

describe(`the webhook under an unauthenticated flood${ON_SERVER}`, () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;

  beforeAll(async () => {
    observed = await startObservedControlPlane();
    kubeconfig = observed.plane.clusters[0]?.kubeconfigPath ?? '';
    // The runtime, so each InferenceService's review has a runtime to look up.
    const runtimeOnly = seedManifests('0.9', []);
    expect(await kubectlCreate(kubeconfig, runtimeOnly)).toMatchObject({ code: 0 });
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  }, 60_000);

  it(`admits every legitimate review while ${FLOOD_RATE} unauthenticated requests a second arrive`, async () => {
    // Arrange
    const webhook = observed.plane.webhook;
    if (!webhook) throw new Error('the control plane serves no webhook');
    const frontDoorBefore = webhook.frontDoor.counts();
    const functionBefore = webhook.invocations();
    const names = Array.from({ length: LEGITIMATE }, (_, index) => `flooded-${index}`);

    // Act: the flood starts, then one legitimate create every half second during it.
    const flooding = flood(observed.plane.webhookUrl ?? '', observed.plane.clusters[0]?.real?.caData);
    const admissions: Array<{ code: number; stderr: string }> = [];
    for (const name of names) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      admissions.push(await kubectlCreate(kubeconfig, seedManifests('0.9', [name]).split('---\n').filter((doc) => doc.includes('kind: InferenceService')).join('---\n')));
    }
    const report = await flooding;
    const frontDoor = webhook.frontDoor.counts();
    const calls = webhook.invocations();

    // Assess: not one legitimate review refused, and the flood never reached the function.
    const refusedAtDoor = frontDoor.refused - frontDoorBefore.refused;
    const passed = frontDoor.passed - frontDoorBefore.passed;
    console.log(
      `front door flood: ${report.sent} requests offered in ${FLOOD_SECONDS} s (${FLOOD_RATE}/s), ${report.answered} answered ${JSON.stringify(report.byStatus)}, ` +
        `${report.errors} connection errors; ${refusedAtDoor} refused at the door, ${passed} passed; function: ${calls.invocations - functionBefore.invocations} invocations, ` +
        `${calls.throttled - functionBefore.throttled} throttled; legitimate: ${admissions.filter((a) => a.code === 0).length}/${LEGITIMATE} admitted`,
    );
    expect(admissions.filter((admission) => admission.code !== 0)).toEqual([]);
    expect(report.sent).toBe(FLOOD_RATE * FLOOD_SECONDS);
    expect(report.answered + report.errors).toBe(report.sent);
    expect(Object.keys(report.byStatus).sort()).toEqual(['403']);
    expect(refusedAtDoor).toBeGreaterThanOrEqual(report.answered);
    expect(calls.throttled - functionBefore.throttled).toBe(0);
    // Only the cluster's own reviews passed: at least one per create, never a flood request.
    expect(passed).toBe(calls.invocations - functionBefore.invocations);
    expect(passed).toBeGreaterThanOrEqual(LEGITIMATE);
    expect(passed).toBeLessThan(LEGITIMATE * 4);
    const listed = await new Promise<string>((resolve) =>
      execFile('kubectl', ['--kubeconfig', kubeconfig, 'get', 'inferenceservices', '-n', NS, '-o', 'name'], (_error, stdout) => resolve(stdout)),
    );
    for (const name of names) expect(listed).toContain(`inferenceservice.ome.io/${name}`);
  }, 120_000);
});
