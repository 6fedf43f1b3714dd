/**
 * The acceptance walk for sync values through the whole local control plane (embedded API
 * server, watch forwarder, local bus, pin and drift-check over DynamoDB Local) with the
 * real kubectl: a timestamp, a 200-character value and a value with spaces each roll their
 * InferenceService forward once, and none of them gets a Warning event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  kubectl,
  kubectlApply,
  NS,
  pinnedRevision,
  REV_085,
  REV_090,
  seedManifests,
  settle,
  START_TIMEOUT_MS,
  startObservedControlPlane,
  waitFor,
  type ObservedControlPlane,
} from '../control-plane/support';

const TOKENS: Array<[string, string]> = [
  ['sync-timestamp', '2026-09-28T14:15:57Z'],
  ['sync-long', `ticket-${'x'.repeat(193)}`],
  ['sync-spaces', 'roll forward after the mem-frac change'],
];

describe('sync values through the local control plane and kubectl', () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;

  beforeAll(async () => {
    observed = await startObservedControlPlane();
    kubeconfig = observed.plane.clusters[0]?.kubeconfigPath ?? '';
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  const field = (name: string, path: string): Promise<string> => kubectl(kubeconfig, ['get', 'inferenceservice', name, '-n', NS, '-o', `jsonpath={${path}}`]);

  it('rolls each forward once', async () => {
    const names = TOKENS.map(([name]) => name);
    await kubectlApply(kubeconfig, seedManifests('0.9', names));
    for (const name of names) expect(await waitFor(() => pinnedRevision(kubeconfig, name), (value) => value !== '')).toBe(REV_090);

    await kubectlApply(kubeconfig, seedManifests('0.85', names));
    for (const name of names) {
      expect(await waitFor(() => field(name, '.status.conditions[?(@.type=="RuntimeDrifted")].reason'), (value) => value !== '')).toBe('RevisionMismatch');
    }

    for (const [name, token] of TOKENS) {
      expect(token.length >= 20).toBe(true);
      await kubectl(kubeconfig, ['annotate', 'inferenceservice', name, '-n', NS, `ome.io/runtime-sync=${token}`, '--overwrite']);
    }
    for (const [name, token] of TOKENS) {
      expect(await waitFor(() => field(name, '.status.lastRuntimeSyncToken'), (value) => value === token)).toBe(token);
      expect(await pinnedRevision(kubeconfig, name)).toBe(REV_085);
      expect(await field(name, '.status.conditions[?(@.type=="RuntimeDrifted")].reason')).toBe('');
    }
    await settle(observed.plane);
    expect(TOKENS[1]?.[1]).toHaveLength(200);
    const warnings = await kubectl(kubeconfig, ['get', 'events', '-n', NS, '--field-selector', 'type=Warning', '-o', 'jsonpath={.items[*].message}']);
    expect(warnings).toBe('');
    expect(observed.plane.bus.deadLetters).toEqual([]);
  });
});
