/**
 * The control plane with a local Prometheus, as `npm start` runs it: one line names it,
 * the functions' environment carries its address as PROMETHEUS_ADDRESS, it scrapes every
 * embedded cluster's engine metrics, and it stops with the plane, taking its address away.
 * Without the binary the plane starts anyway and says so in one line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../local/control-plane';
import { findPrometheusBinary } from '../../local/prometheus';

const START_TIMEOUT_MS = 240_000;
const binary = findPrometheusBinary();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(binary === undefined)(`startControlPlane with a local Prometheus${binary === undefined ? ' (skipped: no prometheus binary; `apt-get install prometheus`)' : ''}`, () => {
  let dataDir: string;
  let plane: ControlPlane;
  const lines: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ome-plane-prometheus-'));
    plane = await startControlPlane({ dataDir, clusters: 2, prometheus: {}, schedules: false, log: (line) => lines.push(line) });
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await plane?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints where it is and gives its address to the functions', () => {
    const prometheus = plane.prometheus;
    expect(prometheus).toBeDefined();
    expect(lines.filter((line) => line.startsWith('prometheus'))).toEqual([expect.stringMatching(new RegExp(`^prometheus {3}${prometheus?.address ?? ''} {2}scraping 2 clusters {2}\\(\\d+\\.\\d s\\)$`))]);
    expect(process.env.PROMETHEUS_ADDRESS).toBe(prometheus?.address);
  });

  it('scrapes every embedded cluster\'s engine metrics', async () => {
    const expected = plane.clusters.map((cluster) => cluster.engineMetrics?.target).sort();
    expect(expected).toHaveLength(2);
    const deadline = Date.now() + 30_000;
    let up: string[] = [];
    while (Date.now() < deadline) {
      const answer = (await (await fetch(`${plane.prometheus?.address ?? ''}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ labels: { instance: string }; health: string }> } };
      up = answer.data.activeTargets.filter((target) => target.health === 'up').map((target) => target.labels.instance).sort();
      if (up.length === expected.length) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(up).toEqual(expected);
  });

  it('stops with the plane', async () => {
    const pid = plane.prometheus?.pid as number;
    expect(alive(pid)).toBe(true);
    await plane.stop();
    expect(alive(pid)).toBe(false);
    expect(process.env.PROMETHEUS_ADDRESS).toBeUndefined();
  });
});

describe('startControlPlane without a Prometheus binary', () => {
  let dataDir: string;
  let plane: ControlPlane;
  const lines: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ome-plane-no-prometheus-'));
    delete process.env.PROMETHEUS_ADDRESS;
    plane = await startControlPlane({ dataDir, prometheus: { binary: join(dataDir, 'no-such-prometheus') }, schedules: false, log: (line) => lines.push(line) });
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await plane?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts anyway and says in one line that analysis steps park and how to install it', () => {
    expect(lines.filter((line) => line.startsWith('prometheus'))).toEqual([
      'prometheus   not installed: canary analysis steps without a Prometheus of their own will park; install it with `apt-get install prometheus`',
    ]);
    expect(plane.prometheus).toBeUndefined();
    expect(process.env.PROMETHEUS_ADDRESS).toBeUndefined();
    expect(plane.functions).toContain('rollout-run');
  });
});
