/**
 * User work goes ahead of sweeps: with the cluster behind a tight client-side rate limit
 * (the real token bucket and HTTP client to the embedded API server), a sync token is
 * applied while a large drift fan-out is in progress, and the fan-out's requests do not
 * run ahead of the pin's. The order is read from the requests' completions, not a clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromRecord } from '../../shared/adapters/kubernetes';
import { createClusterClient } from '../../shared/adapters/kubernetes/cluster-client';
import { TokenBucket } from '../../shared/adapters/kubernetes/rate-limit';
import { currentPriority, runAsSweep } from '../../shared/app/context';
import { Resources } from '../../shared/domain/model/resources';
import { checkRuntimeDrift, type DriftCheckDeps } from '../../shared/use-cases/pinning/check-runtime-drift';
import { pinInferenceService } from '../../shared/use-cases/pinning/pin-inference-service';
import { annotateSync, applyRuntime, NS, pinColumns, REV_085, RUNTIME, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

const COUNT = 60;
const TARGET = 'zz-user';
let world: PinningWorld;

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
  for (let i = 0; i <= COUNT; i += 1) {
    const name = i === COUNT ? TARGET : `isvc-${String(i).padStart(2, '0')}`;
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, { autoSync: false }));
    await world.pin(name);
  }
  await applyRuntime(world.admin, seedRuntime('0.85'));
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

describe('user work ahead of sweeps', () => {
  it('applies a sync token while a large fan-out is in progress, without waiting behind it', async () => {
    // Prepare: one bucket for the cluster (20 QPS, burst 3), as the app context shares it.
    const completions: Array<'user' | 'sweep'> = [];
    let onSweepCompletion: (() => void) | undefined;
    const bucket = new TokenBucket({ qps: 20, burst: 3 }, Date.now);
    const connection = connectionFromRecord({ id: 'limited', server: world.cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: world.cluster.kubeconfig }, mode: 'standalone' });
    const client = createClusterClient(connection, {
      rateLimiter: bucket,
      priority: currentPriority,
      onResponse: () => {
        completions.push(currentPriority());
        if (currentPriority() === 'sweep') onSweepCompletion?.();
      },
    });
    const deps: DriftCheckDeps = { ...world.deps, client, workloads: world.deps.workloads, concurrency: 16 };
    const fanOutUnderWay = new Promise<void>((resolve) => {
      onSweepCompletion = () => {
        if (completions.filter((p) => p === 'sweep').length >= 10) resolve();
      };
    });

    // Act: the fan-out runs as a sweep; once it is under way, a user annotates a sync token.
    const fanOut = runAsSweep(() => checkRuntimeDrift(deps, { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' }));
    await fanOutUnderWay;
    await annotateSync(world.admin, TARGET, 'sync-1');
    const startedAt = completions.length;
    await pinInferenceService(deps, { namespace: NS, name: TARGET });
    const during = completions.slice(startedAt);
    const fanOutRequestsDone = completions.filter((p) => p === 'sweep').length;
    const report = await fanOut;
    client.close();

    // Assess: the token was applied while the fan-out still had most of its writes ahead…
    expect(await pinColumns(world.admin, TARGET)).toMatchObject({ token: 'sync-1', pinned: REV_085 });
    expect(fanOutRequestsDone).toBeLessThan((COUNT * 2) / 3);
    // …and its requests did not queue behind the fan-out's: at most one sweep request
    // completed per request of the pin (a FIFO bucket lets 16 in flight go first each time).
    const user = during.filter((p) => p === 'user').length;
    expect(user).toBeGreaterThan(0);
    expect(during.filter((p) => p === 'sweep').length).toBeLessThanOrEqual(user);
    expect(report).toMatchObject({ failed: 0 });
    expect(report.statusWrites).toBeGreaterThanOrEqual(COUNT);
  }, 60_000);
});
