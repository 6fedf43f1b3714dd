/**
 * The runtime pinning user guide ("Runtime revisions and pinning"), walked in order with the
 * real kubectl and `kubectl ome` against the control plane as `npm start` starts it. Every
 * table and message the guide prints is compared with what the commands print here; revision
 * hashes are matched by pattern, and then checked to be the guide's own, since the hash
 * reproduces upstream's. Past the guide's printed steps, the walk covers what the guide
 * states in prose: a `kubectl ome runtime sync` and its wait, stopping and resuming pinning,
 * every RuntimeDrifted reason, the webhook's check of the live runtime, and the
 * RuntimePinError event.
 *
 * The walk runs in both cluster modes. In `delegate` the cluster is registered so and the
 * stand-in for upstream OME's controller and webhooks (test/support/upstream-controller.ts)
 * pins, reports drift and renders, while the plane only reads and reports: the guide's
 * outputs are the same, since the user's commands meet upstream's levers either way.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { ON_SERVER } from '../support/test-cluster';
import { handledSince, kubectlOk, maskRevisionHashes, planeRequests, pollUntil, prunedWrites, runKubectl, startWalkthrough, WALK_MODES, writeWorkFile } from './support';
import type { ObjectChange, Walkthrough } from './support';

const NS = 'llama-demo';
const ISVC = 'llama-3-2-3b-instruct';
const RUNTIME = 'sglang-llama-3-2-3b';
const REV_090 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
const REV_085 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';
const DEPLOYMENT = `${ISVC}-engine`;

const PIN_COLUMNS =
  'custom-columns=NAME:.metadata.name,PINNED:.status.pinnedRevisionName,DRIFTED:.status.conditions[?(@.type=="RuntimeDrifted")].status,REASON:.status.conditions[?(@.type=="RuntimeDrifted")].reason';
const PIN_TABLE_ARGS = ['get', 'inferenceservice', ISVC, '-n', NS, '-o', PIN_COLUMNS];
const DRIFT_MESSAGE_ARGS = ['get', 'inferenceservice', ISVC, '-n', NS, '-o', 'jsonpath={.status.conditions[?(@.type=="RuntimeDrifted")].message}'];

/** The guide's pin table for `revision`, without drift or with `True` and `reason`. */
function pinTable(revision: string, reason?: string): string {
  const drifted = reason ? 'True      ' + reason : '<none>    <none>';
  return ['NAME                    PINNED                                      DRIFTED   REASON', `${ISVC}   ${revision}   ${drifted}`, ''].join('\n');
}

/** The guide's `runtime.yaml`: the ServingRuntime of "What's in a runtime". */
const RUNTIME_YAML = stringify({ apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: RUNTIME, namespace: NS }, spec: buildSeedRuntimeSpec('0.9') });

/** A minimal `llama-3-2-3b-instruct` ClusterBaseModel (no model agent runs here). */
const MODEL_YAML = `apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-2-3b-instruct
spec:
  vendor: meta
  disabled: false
  version: "3.2"
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.45.0.dev0"
  modelArchitecture: LlamaForCausalLM
  modelParameterSize: 3.21B
  storage:
    storageUri: hf://meta-llama/Llama-3.2-3B-Instruct
    path: /raid/models/meta/llama-3-2-3b-instruct
`;

/** The guide's `isvc.yaml`, with `runtime` lines varied by the later steps. */
function isvcYaml(runtime: { autoSync?: boolean; revision?: string } = { autoSync: false }, name = ISVC, runtimeName = RUNTIME, replicas = 1): string {
  const lines = [
    'apiVersion: ome.io/v1beta1',
    'kind: InferenceService',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${NS}`,
    'spec:',
    '  model:',
    '    name: llama-3-2-3b-instruct',
    '  runtime:',
    `    name: ${runtimeName}`,
    '    kind: ServingRuntime',
    ...(runtime.autoSync === undefined ? [] : [`    autoSync: ${runtime.autoSync}`]),
    ...(runtime.revision === undefined ? [] : [`    revision: ${runtime.revision}`]),
    '  engine:',
    `    minReplicas: ${replicas}`,
    `    maxReplicas: ${replicas}`,
    '',
  ];
  return lines.join('\n');
}

// Walked twice: the plane as the cluster's controller, and beside upstream OME's (delegate).
describe.each(WALK_MODES)(`Runtime revisions and pinning, walked with kubectl (%s)${ON_SERVER}`, (mode) => {
  let walk: Walkthrough;
  const kubectl = (...args: string[]) => kubectlOk(walk, args);
  const pinTableNow = () => kubectl(...PIN_TABLE_ARGS);
  const waitForPinTable = (expected: string, what: string) => pollUntil(what, pinTableNow, (table) => table === expected);
  const isvcField = (jsonpath: string) => kubectl('get', 'inferenceservice', ISVC, '-n', NS, '-o', `jsonpath={${jsonpath}}`);
  const syncTokenNow = () => isvcField('.status.lastRuntimeSyncToken');
  const deploymentField = (jsonpath: string) => kubectl('get', 'deploy', DEPLOYMENT, '-n', NS, '-o', `jsonpath={${jsonpath}}`);
  /** Waits until pin has re-read the InferenceService after `change`, so what it left alone stays so. */
  const pinHandled = (change: ObjectChange) => handledSince(walk, 'pin', { kind: 'InferenceService', namespace: NS, name: ISVC }, change);
  /** Applies isvc.yaml as given, expecting "configured", and resolves with the generation it made. */
  const applyIsvc = async (yaml: string): Promise<ObjectChange> => {
    await writeWorkFile(walk, 'isvc.yaml', yaml);
    expect(await kubectl('apply', '-f', 'isvc.yaml')).toBe(`inferenceservice.ome.io/${ISVC} configured\n`);
    return { generation: Number(await isvcField('.metadata.generation')) };
  };
  /** Sets ome.io/runtime-sync, and resolves with the resourceVersion the change made. */
  const annotateSync = async (value: string): Promise<ObjectChange> => ({
    resourceVersion: await kubectl('annotate', 'inferenceservice', ISVC, '-n', NS, `ome.io/runtime-sync=${value}`, '--overwrite', '-o', 'jsonpath={.metadata.resourceVersion}'),
  });
  /** kubectl's stderr for an apply of isvc.yaml that the webhook denied with `reason`. */
  const deniedApply = (reason: string) =>
    new RegExp(
      `^Error from server \\(Forbidden\\): error when applying patch:\n[\\s\\S]*\nfor: "isvc.yaml": error when patching "isvc.yaml": ` +
        `admission webhook "inferenceservice.ome-webhook-server.validator" denied the request: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n$`,
    );

  /** The drift notifications the notification topic received about the InferenceService, in order. */
  const driftNotifications = (): string[] =>
    walk.plane.bus
      .topicMessages('NotificationTopic')
      .filter((event) => (event.detail as { name?: string }).name === ISVC && String(event['detail-type']).startsWith('Drift'))
      .map((event) => {
        const detail = event.detail as { condition: string; reason: string; message: string };
        return `${event['detail-type']} ${detail.condition} ${detail.reason}: ${detail.message}`;
      });

  /** The `--mem-frac` argument of the rendered engine Deployment's container. */
  const memFrac = async (): Promise<string | undefined> => {
    const result = await runKubectl(walk, ['get', 'deploy', DEPLOYMENT, '-n', NS, '-o', 'json']);
    if (result.code !== 0) return undefined;
    const deployment = JSON.parse(result.stdout) as { spec: { template: { spec: { containers: Array<{ args?: string[] }> } } } };
    return deployment.spec.template.spec.containers.flatMap((container) => container.args ?? []).find((arg) => arg.startsWith('--mem-frac='));
  };
  const waitForMemFrac = (value: string) => pollUntil(`Deployment ${DEPLOYMENT} with --mem-frac=${value}`, memFrac, (arg) => arg === `--mem-frac=${value}`);

  beforeAll(async () => {
    walk = await startWalkthrough(mode);
    await writeWorkFile(walk, 'model.yaml', MODEL_YAML);
    await writeWorkFile(walk, 'runtime.yaml', RUNTIME_YAML);
    await writeWorkFile(walk, 'isvc.yaml', isvcYaml());
  });

  afterAll(async () => {
    await walk?.stop();
  });

  describe('Pin an InferenceService', () => {
    it('creates the namespace, the model and the runtime', async () => {
      expect(await kubectl('create', 'namespace', NS)).toBe(`namespace/${NS} created\n`);
      expect(await kubectl('apply', '-f', 'model.yaml')).toBe('clusterbasemodel.ome.io/llama-3-2-3b-instruct created\n');
      expect(await kubectl('apply', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io/${RUNTIME} created\n`);
    });

    it('applies isvc.yaml: "inferenceservice.ome.io/llama-3-2-3b-instruct created"', async () => {
      expect(await kubectl('apply', '-f', 'isvc.yaml')).toBe('inferenceservice.ome.io/llama-3-2-3b-instruct created\n');
    });

    it('prints the pinned revision without drift, the guide\'s hash included', async () => {
      const table = await pollUntil('a pinned revision', pinTableNow, (text) => !text.includes('   <none>    <none>    <none>') && /-[0-9a-f]{8}\s/.test(text));
      expect(maskRevisionHashes(table)).toBe(maskRevisionHashes(pinTable(REV_090)));
      expect(table).toBe(pinTable(REV_090));
    });

    it('stores the revision in OME\'s namespace and renders the workload from it', async () => {
      expect(await kubectl('get', 'controllerrevision', REV_090, '-n', 'ome', '-o', 'jsonpath={.metadata.labels.ome\\.io/runtime-of}')).toBe(RUNTIME);
      expect(await waitForMemFrac('0.9')).toBe('--mem-frac=0.9');
    });
  });

  describe('When the runtime changes', () => {
    it('applies runtime.yaml with --mem-frac=0.85: "configured"', async () => {
      const path = join(walk.workDir, 'runtime.yaml');
      const edited = (await readFile(path, 'utf8')).replace('--mem-frac=0.9', '--mem-frac=0.85');
      await writeWorkFile(walk, 'runtime.yaml', edited);
      expect(await kubectl('apply', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io/${RUNTIME} configured\n`);
    });

    it('reports RuntimeDrifted True with RevisionMismatch, and the guide\'s message', async () => {
      await waitForPinTable(pinTable(REV_090, 'RevisionMismatch'), 'RevisionMismatch');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`);
    });

    // Delegate: upstream's controller writes the condition, so the plane announces nothing.
    it.skipIf(mode === 'delegate')('notifies the drift once, with the condition\'s reason and the guide\'s message', async () => {
      const drift = await pollUntil('a DriftReported notification', async () => driftNotifications(), (seen) => seen.length > 0);
      expect(drift).toEqual([`DriftReported RuntimeDrifted RevisionMismatch: pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`]);
    });

    it('leaves the workload on the pinned revision: --mem-frac=0.9', async () => {
      expect(await memFrac()).toBe('--mem-frac=0.9');
      const yaml = await kubectl('get', 'deploy', DEPLOYMENT, '-n', NS, '-o', 'yaml');
      expect(yaml).toContain('- --mem-frac=0.9\n');
    });
  });

  describe('Roll forward to the latest runtime', () => {
    it('annotates ome.io/runtime-sync: "annotated", then pins the live spec without drift', async () => {
      // Creation times have one-second resolution and history lists newest first: the new
      // revision must not share the first one's second, or their order is a tie.
      const firstCreated = Date.parse(await kubectl('get', 'controllerrevision', REV_090, '-n', 'ome', '-o', 'jsonpath={.metadata.creationTimestamp}'));
      while (Date.now() < firstCreated + 1_000) await new Promise((resolveDelay) => setTimeout(resolveDelay, 50));
      expect(await kubectl('annotate', 'inferenceservice', ISVC, '-n', NS, 'ome.io/runtime-sync=mem-frac-0-85', '--overwrite')).toBe(
        `inferenceservice.ome.io/${ISVC} annotated\n`,
      );
      const table = await pollUntil('the roll forward', pinTableNow, (text) => !text.includes(REV_090));
      expect(maskRevisionHashes(table)).toBe(maskRevisionHashes(pinTable(REV_085)));
      expect(table).toBe(pinTable(REV_085));
      expect(await syncTokenNow()).toBe('mem-frac-0-85');
    });

    it.skipIf(mode === 'delegate')('notifies that the drift cleared', async () => {
      const drift = await pollUntil('a DriftCleared notification', async () => driftNotifications(), (seen) => seen.length > 1);
      expect(drift.slice(1)).toEqual(['DriftCleared RuntimeDrifted : RuntimeDrifted cleared']);
    });

    it('rolls out the new revision: --mem-frac=0.85', async () => {
      expect(await waitForMemFrac('0.85')).toBe('--mem-frac=0.85');
    });

    it('refuses kubectl ome runtime sync while nothing has drifted', async () => {
      const result = await runKubectl(walk, ['ome', 'runtime', 'sync', ISVC, '-n', NS, '--yes']);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('error: action refused: managed runtime sync safety evidence is unavailable or inconsistent\n');
    });
  });

  describe('Roll back to an earlier revision', () => {
    it('lists the runtime\'s revisions, oldest first', async () => {
      const output = await kubectl(
        'get',
        'controllerrevisions',
        '-n',
        'ome',
        '-l',
        `ome.io/runtime-of=${RUNTIME}`,
        '--sort-by=.metadata.creationTimestamp',
        '-o',
        'custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp',
      );
      const masked = maskRevisionHashes(output).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>');
      expect(masked).toBe(
        ['NAME                                        CREATED', 'r-llama-demo-sglang-llama-3-2-3b-<hash>   <time>', 'r-llama-demo-sglang-llama-3-2-3b-<hash>   <time>', ''].join('\n'),
      );
      expect(output.split('\n').slice(1, 3).map((line) => line.split(/\s+/)[0])).toEqual([REV_090, REV_085]);
    });

    it('lists the same revisions with kubectl ome runtime history -o wide, newest first, the one in use marked', async () => {
      const [header = '', ...rows] = (await kubectl('ome', 'runtime', 'history', ISVC, '-n', NS, '-o', 'wide')).trimEnd().split('\n');
      const columns = header.split(/\s+/);
      const cells = rows.map((row) => row.split(/\s+/));
      const column = (name: string) => cells.map((cell) => cell[columns.indexOf(name)]);
      expect(column('REVISION')).toEqual([REV_085, REV_090]);
      expect(column('ROLES')).toEqual(['Active,Reported,History', 'History']);
      expect(column('HASH')).toEqual(['af9539ac', '590753e8']);
    });

    it('applies isvc.yaml with revision: "configured", back on the first revision without drift', async () => {
      await applyIsvc(isvcYaml({ autoSync: false, revision: REV_090 }));
      await waitForPinTable(pinTable(REV_090), 'the rollback');
      expect(await waitForMemFrac('0.9')).toBe('--mem-frac=0.9');
      expect(await deploymentField('.metadata.annotations.ome\\.io/rendered-from')).toBe(REV_090);
    });

    it('rejects a ClusterServingRuntime\'s revision name with kind: ServingRuntime, with the guide\'s reason', async () => {
      await writeWorkFile(walk, 'isvc.yaml', isvcYaml({ autoSync: false, revision: 'cr-sglang-llama-3-2-3b-590753e8' }));
      const result = await runKubectl(walk, ['apply', '-f', 'isvc.yaml']);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        deniedApply(
          'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>',
        ),
      );
      expect(await isvcField('.spec.runtime.revision')).toBe(REV_090);
    });

    it('rejects a revision with autoSync: true', async () => {
      await writeWorkFile(walk, 'isvc.yaml', isvcYaml({ autoSync: true, revision: REV_090 }));
      const result = await runKubectl(walk, ['apply', '-f', 'isvc.yaml']);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(deniedApply('spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin'));
    });

    it('stays on the revision when revision is removed, and compares it with the live runtime again', async () => {
      await applyIsvc(isvcYaml({ autoSync: false }));
      await waitForPinTable(pinTable(REV_090, 'RevisionMismatch'), 'RevisionMismatch after removing revision');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`);
      expect(await memFrac()).toBe('--mem-frac=0.9');
    });
  });

  describe('Stop pinning, then pin again', () => {
    it('follows the live runtime with autoSync: true; status keeps its last values', async () => {
      await applyIsvc(isvcYaml({ autoSync: true }));
      expect(await waitForMemFrac('0.85')).toBe('--mem-frac=0.85');
      expect(await deploymentField('.metadata.annotations.ome\\.io/rendered-from')).toBe('live');
      expect(await pinTableNow()).toBe(pinTable(REV_090, 'RevisionMismatch'));
    });

    it('resumes from that revision with autoSync: false, not from the live spec', async () => {
      await pinHandled(await applyIsvc(isvcYaml({ autoSync: false })));
      expect(await pinTableNow()).toBe(pinTable(REV_090, 'RevisionMismatch'));
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`pinned ${REV_090}, live spec differs; bump ome.io/runtime-sync annotation to advance`);
      // Drifted again, so the workload is left as the live runtime rendered it.
      expect(await deploymentField('.metadata.annotations.ome\\.io/rendered-from')).toBe('live');
    });

    it('pauses updates while drifted: a new minReplicas waits', async () => {
      await pinHandled(await applyIsvc(isvcYaml({ autoSync: false }, ISVC, RUNTIME, 2)));
      expect(await deploymentField('.spec.replicas')).toBe('1');
      expect(await pinTableNow()).toBe(pinTable(REV_090, 'RevisionMismatch'));
    });

    it('runs kubectl ome runtime sync --dry-run server through admission without storing anything', async () => {
      const before = await isvcField('.metadata.resourceVersion');
      const dryRun = await runKubectl(walk, ['ome', 'runtime', 'sync', ISVC, '-n', NS, '--dry-run', 'server', '--yes']);
      expect(dryRun.code).toBe(0);
      expect(dryRun.stdout).toMatch(/^accepted +Yes$/m);
      expect(dryRun.stdout).toMatch(/^applied +No$/m);
      expect(dryRun.stdout).toMatch(/^message +API dry-run accepted; no changes persisted\.$/m);
      expect(await isvcField('.metadata.resourceVersion')).toBe(before);
      expect(await isvcField('.metadata.annotations.ome\\.io/runtime-sync')).toBe('mem-frac-0-85');
    });

    it('ends kubectl ome wait with exit 2 when the request was never made', async () => {
      const wait = await runKubectl(walk, [
        'ome',
        'wait',
        ISVC,
        '-n',
        NS,
        '--for=runtime-sync=acknowledged',
        '--request-id=3f0c9a52-8d1e-4b7a-9c65-2e4f1d7b8a90',
        '--poll-interval=1s',
        '--timeout=2s',
      ]);
      expect(wait.code).toBe(2);
      expect(wait.stderr).toBe('error: RequestedConditionUnmet\n');
      expect(wait.stdout).toMatch(/^Outcome +TimedOut$/m);
    });

    it('rolls forward with kubectl ome runtime sync, and kubectl ome wait sees it acknowledged', async () => {
      const sync = await runKubectl(walk, ['ome', 'runtime', 'sync', ISVC, '-n', NS, '--yes']);
      expect(sync.stderr).toMatch(/^ALPHA runtime sync preview \(acceptance is not convergence\)\n/);
      expect(sync.stderr).toMatch(/^Predicted pin +r-llama-demo-sglang-llama-3-2-3b-af9539ac$/m);
      expect(sync.code).toBe(0);
      expect(sync.stdout).toMatch(/^applied +Yes$/m);
      const requestId = sync.stdout.match(/^request-id +(\S+)$/m)?.[1] ?? '';
      expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

      const wait = await runKubectl(walk, ['ome', 'wait', ISVC, '-n', NS, '--for=runtime-sync=acknowledged', `--request-id=${requestId}`, '--poll-interval=1s', '--timeout=45s']);
      expect(wait).toMatchObject({ code: 0, stderr: '' });
      expect(wait.stdout).toMatch(/^Outcome +Matched$/m);
      expect(await pinTableNow()).toBe(pinTable(REV_085));
      expect(await syncTokenNow()).toBe(`cli-runtime-sync-${requestId}`);
    });

    it('renders the rolled-forward revision with the waiting minReplicas', async () => {
      expect(await waitForMemFrac('0.85')).toBe('--mem-frac=0.85');
      expect(await pollUntil('the waiting minReplicas', () => deploymentField('.spec.replicas'), (replicas) => replicas === '2')).toBe('2');
      expect(await deploymentField('.metadata.annotations.ome\\.io/rendered-from')).toBe(REV_085);
    });
  });

  describe('The RuntimeDrifted condition: every reason', () => {
    it('RevisionMissing: the pinned revision was deleted', async () => {
      expect(await kubectl('delete', 'controllerrevision', REV_085, '-n', 'ome')).toBe(`controllerrevision.apps "${REV_085}" deleted\n`);
      await waitForPinTable(pinTable(REV_085, 'RevisionMissing'), 'RevisionMissing');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`pinned revision ${REV_085} missing from ome`);
    });

    it('RevisionMissing: rolling forward does not clear it', async () => {
      await pinHandled(await annotateSync('after-revision-missing'));
      expect(await pinTableNow()).toBe(pinTable(REV_085, 'RevisionMissing'));
      expect(await syncTokenNow()).toMatch(/^cli-runtime-sync-/);
    });

    it('RevisionMissing: pinning a revision that exists clears it', async () => {
      await applyIsvc(isvcYaml({ autoSync: false, revision: REV_090 }, ISVC, RUNTIME, 2));
      await waitForPinTable(pinTable(REV_090), 'pinned to an existing revision');
      expect(await waitForMemFrac('0.9')).toBe('--mem-frac=0.9');
    });

    it('RevisionMissing: spec.runtime.revision names a revision that does not exist', async () => {
      const absent = 'r-llama-demo-sglang-llama-3-2-3b-0000beef';
      await applyIsvc(isvcYaml({ autoSync: false, revision: absent }, ISVC, RUNTIME, 2));
      await waitForPinTable(pinTable(REV_090, 'RevisionMissing'), 'RevisionMissing for an explicit pin');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`explicit pin ${absent} not found in namespace ome`);
      expect(await memFrac()).toBe('--mem-frac=0.9');
    });

    it('RuntimeMismatch: spec.runtime.revision belongs to a runtime with another name', async () => {
      // The webhook checks the name's form only, so a revision of another runtime named in this
      // runtime's form gets through: one made by hand.
      const foreign = 'r-llama-demo-sglang-llama-3-2-3b-0badc0de';
      const revision = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: { name: foreign, namespace: 'ome', labels: { 'ome.io/runtime-of': 'vllm-llama-3-2-3b', 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/runtime-of-namespace': NS } },
        data: buildSeedRuntimeSpec('0.9'),
        revision: 1,
      };
      await writeWorkFile(walk, 'foreign-revision.yaml', stringify(revision));
      expect(await kubectl('apply', '-f', 'foreign-revision.yaml')).toBe(`controllerrevision.apps/${foreign} created\n`);
      await applyIsvc(isvcYaml({ autoSync: false, revision: foreign }, ISVC, RUNTIME, 2));
      await waitForPinTable(pinTable(REV_090, 'RuntimeMismatch'), 'RuntimeMismatch');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`revision ${foreign} belongs to runtime "vllm-llama-3-2-3b" but ISVC references "${RUNTIME}"`);
      expect(await memFrac()).toBe('--mem-frac=0.9');
    });

    it('RuntimeMismatch: pinning a revision of this runtime clears it', async () => {
      await applyIsvc(isvcYaml({ autoSync: false, revision: REV_090 }, ISVC, RUNTIME, 2));
      await waitForPinTable(pinTable(REV_090), 'RuntimeMismatch cleared');
    });

    it('SourceRuntimeMissing: the runtime was deleted, and the workload keeps serving the revision', async () => {
      expect(await kubectl('delete', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io "${RUNTIME}" deleted\n`);
      await waitForPinTable(pinTable(REV_090, 'SourceRuntimeMissing'), 'SourceRuntimeMissing');
      expect(await kubectl(...DRIFT_MESSAGE_ARGS)).toBe(`runtime ${RUNTIME} not found; serving from pinned revision ${REV_090}`);
      expect(await memFrac()).toBe('--mem-frac=0.9');
      expect(await deploymentField('.metadata.annotations.ome\\.io/rendered-from')).toBe(REV_090);
    });

    it('rejects every update to the InferenceService while its runtime is missing, with the guide\'s reason', async () => {
      await writeWorkFile(walk, 'isvc.yaml', isvcYaml({ autoSync: false, revision: REV_090 }, ISVC, RUNTIME, 3));
      const result = await runKubectl(walk, ['apply', '-f', 'isvc.yaml']);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        deniedApply(`runtime ${RUNTIME} does not support model llama-3-2-3b-instruct: ServingRuntime ${RUNTIME} not found in namespace ${NS}`),
      );
    });

    it('SourceRuntimeMissing: recreating the runtime clears it', async () => {
      expect(await kubectl('apply', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io/${RUNTIME} created\n`);
      await waitForPinTable(pinTable(REV_090), 'SourceRuntimeMissing cleared');
    });
  });

  describe('ome.io/runtime-sync values', () => {
    it('are ignored while spec.runtime.revision is set', async () => {
      const before = await syncTokenNow();
      await pinHandled(await annotateSync('while-revision-set'));
      expect(await pinTableNow()).toBe(pinTable(REV_090));
      expect(await syncTokenNow()).toBe(before);
    });

    it('take effect once revision is removed', async () => {
      await applyIsvc(isvcYaml({ autoSync: false }, ISVC, RUNTIME, 2));
      await waitForPinTable(pinTable(REV_085), 'the roll forward on removing revision');
      expect(await syncTokenNow()).toBe('while-revision-set');
      expect(await waitForMemFrac('0.85')).toBe('--mem-frac=0.85');
    });

    it('wait when set before the runtime changes, and roll forward at the change without reporting drift first', async () => {
      await pinHandled(await annotateSync('before-mem-frac-0-8'));
      expect(await pinTableNow()).toBe(pinTable(REV_085));
      expect(await syncTokenNow()).toBe('while-revision-set');

      const path = join(walk.workDir, 'runtime.yaml');
      await writeWorkFile(walk, 'runtime.yaml', (await readFile(path, 'utf8')).replace('--mem-frac=0.85', '--mem-frac=0.8'));
      expect(await kubectl('apply', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io/${RUNTIME} configured\n`);
      const seen: string[] = [];
      const table = await pollUntil(
        'the roll forward at the change',
        async () => {
          const text = await pinTableNow();
          seen.push(text);
          return text;
        },
        (text) => !text.includes(REV_085),
      );
      expect(maskRevisionHashes(table)).toBe(maskRevisionHashes(pinTable(REV_085)));
      expect(seen.filter((text) => text.includes('True'))).toEqual([]);
      expect(await syncTokenNow()).toBe('before-mem-frac-0-8');
      expect(await waitForMemFrac('0.8')).toBe('--mem-frac=0.8');
    });
  });

  describe('Drift pauses updates until the runtime change is undone', () => {
    const setRuntimeMemFrac = async (from: string, to: string) => {
      const path = join(walk.workDir, 'runtime.yaml');
      await writeWorkFile(walk, 'runtime.yaml', (await readFile(path, 'utf8')).replace(`--mem-frac=${from}`, `--mem-frac=${to}`));
      expect(await kubectl('apply', '-f', 'runtime.yaml')).toBe(`servingruntime.ome.io/${RUNTIME} configured\n`);
    };
    let pinned = '';

    it('drifts on a runtime change, and leaves a new minReplicas waiting', async () => {
      pinned = await isvcField('.status.pinnedRevisionName');
      await setRuntimeMemFrac('0.8', '0.75');
      await waitForPinTable(pinTable(pinned, 'RevisionMismatch'), 'RevisionMismatch on the second change');
      await pinHandled(await applyIsvc(isvcYaml({ autoSync: false }, ISVC, RUNTIME, 3)));
      expect(await deploymentField('.spec.replicas')).toBe('2');
      expect(await memFrac()).toBe('--mem-frac=0.8');
    });

    it('clears the drift when the change is undone, and renders the waiting minReplicas', async () => {
      await setRuntimeMemFrac('0.75', '0.8');
      await waitForPinTable(pinTable(pinned), 'the drift cleared by undoing the change');
      expect(await pollUntil('the waiting minReplicas', () => deploymentField('.spec.replicas'), (replicas) => replicas === '3')).toBe('3');
      expect(await memFrac()).toBe('--mem-frac=0.8');
    });
  });

  describe('Revision names, sharing and inheritance', () => {
    /** Applies an InferenceService named `name` and resolves with the revision it gets pinned to. */
    const pinAnother = async (name: string, yaml: string): Promise<string> => {
      await writeWorkFile(walk, `${name}.yaml`, yaml);
      expect(await kubectl('apply', '-f', `${name}.yaml`)).toBe(`inferenceservice.ome.io/${name} created\n`);
      const read = () => kubectl('get', 'inferenceservice', name, '-n', NS, '-o', 'jsonpath={.status.pinnedRevisionName}');
      return pollUntil(`${name} pinned`, read, (revision) => revision !== '');
    };

    it('pins InferenceServices on the same spec to one shared revision', async () => {
      const current = await isvcField('.status.pinnedRevisionName');
      expect(current).toMatch(/^r-llama-demo-sglang-llama-3-2-3b-[0-9a-f]{8}$/);
      expect(await pinAnother('llama-3-2-3b-instruct-shared', isvcYaml({ autoSync: false }, 'llama-3-2-3b-instruct-shared'))).toBe(current);
      const hash = current.slice(-8);
      const names = await kubectl('get', 'controllerrevisions', '-n', 'ome', '-l', `ome.io/revision-hash=${hash}`, '-o', 'jsonpath={.items[*].metadata.name}');
      expect(names).toBe(current);
    });

    it('names the revision cr-<runtime>-<hash> when kind is left out, for the same ServingRuntime', async () => {
      const current = await isvcField('.status.pinnedRevisionName');
      const yaml = isvcYaml({ autoSync: false }, 'llama-3-2-3b-instruct-default-kind').replace('    kind: ServingRuntime\n', '');
      expect(await pinAnother('llama-3-2-3b-instruct-default-kind', yaml)).toBe(`cr-${RUNTIME}-${current.slice(-8)}`);
    });

    it('rejects a ServingRuntime\'s revision name when kind is left out', async () => {
      await writeWorkFile(walk, 'isvc.yaml', isvcYaml({ autoSync: false, revision: REV_090 }, ISVC, RUNTIME, 2).replace('    kind: ServingRuntime\n', ''));
      const result = await runKubectl(walk, ['apply', '-f', 'isvc.yaml']);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        deniedApply(
          `spec.runtime.revision "${REV_090}" does not match the expected naming convention for runtime "${RUNTIME}" (ClusterServingRuntime); expected the form cr-${RUNTIME}-<8 lowercase hex chars>`,
        ),
      );
    });

    it('pins the merged spec of a runtime that inherits from another', async () => {
      const child = `${RUNTIME}-tp2`;
      const runtime = {
        apiVersion: 'ome.io/v1beta1',
        kind: 'ServingRuntime',
        metadata: { name: child, namespace: NS, annotations: { 'ome.io/inherit-from': RUNTIME } },
        spec: {
          engineConfig: {
            runner: { name: 'ome-container', args: ['--host=0.0.0.0', '--port=8080', '--model-path=$(MODEL_PATH)', '--served-model-name={{.Name}}', '--tp-size=2', '--mem-frac=0.8'] },
          },
        },
      };
      await writeWorkFile(walk, 'child-runtime.yaml', stringify(runtime));
      expect(await kubectl('apply', '-f', 'child-runtime.yaml')).toBe(`servingruntime.ome.io/${child} created\n`);
      const name = 'llama-3-2-3b-instruct-tp2';
      const revision = await pinAnother(name, isvcYaml({ autoSync: false }, name, child));
      expect(revision).toMatch(new RegExp(`^r-llama-demo-${child}-[0-9a-f]{8}$`));
      const data = JSON.parse(await kubectl('get', 'controllerrevision', revision, '-n', 'ome', '-o', 'jsonpath={.data}')) as {
        supportedModelFormats?: unknown[];
        engineConfig?: { runner?: { image?: string; args?: string[] } };
      };
      expect(data.supportedModelFormats).toHaveLength(1);
      expect(data.engineConfig?.runner?.image).toBe('docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64');
      expect(data.engineConfig?.runner?.args).toContain('--tp-size=2');
      const args = await pollUntil(
        `Deployment ${name}-engine`,
        () => runKubectl(walk, ['get', 'deploy', `${name}-engine`, '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']),
        (result) => result.code === 0,
      );
      expect(JSON.parse(args.stdout)).toContain('--tp-size=2');
    });
  });

  describe('When OME cannot pin at all', () => {
    it('records a RuntimePinError Warning event for a runtime missing at the first pin', async () => {
      const name = 'llama-3-2-3b-instruct-unpinned';
      // Without an engine section the webhook does not look the runtime up, so it admits this.
      const yaml = isvcYaml({ autoSync: false }, name, 'sglang-llama-3-2-3b-missing').replace(/ {2}engine:\n.*\n.*\n$/, '');
      await writeWorkFile(walk, 'unpinned.yaml', yaml);
      expect(await kubectl('apply', '-f', 'unpinned.yaml')).toBe(`inferenceservice.ome.io/${name} created\n`);
      const events = await pollUntil(
        'a RuntimePinError event',
        () => kubectl('get', 'events', '-n', NS, '--field-selector', 'reason=RuntimePinError'),
        (text) => text.includes(`inferenceservice/${name}`),
      );
      const [header, ...rows] = events.trimEnd().split('\n');
      expect(header).toMatch(/^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$/);
      expect(rows.find((row) => row.includes(`inferenceservice/${name}`))).toMatch(
        new RegExp(`\\sWarning +RuntimePinError +inferenceservice/${name} +resolve live runtime sglang-llama-3-2-3b-missing: ServingRuntime sglang-llama-3-2-3b-missing not found in namespace ${NS}$`),
      );
      expect(await kubectl('get', 'inferenceservice', name, '-n', NS, '-o', 'jsonpath={.status.pinnedRevisionName}')).toBe('');
      expect((await runKubectl(walk, ['get', 'deploy', `${name}-engine`, '-n', NS])).code).toBe(1);
    });
  });

  describe('Schema parity', () => {
    it('left nothing for the API server to prune: every write fits the CRDs, which mirror upstream OME', () => {
      expect(prunedWrites(walk.plane)).toEqual([]);
    });
  });

  describe.runIf(mode === 'delegate')('Beside upstream OME\'s controller (delegate)', () => {
    it('the plane read the InferenceServices it was told of, and wrote nothing to the cluster: no status, no workload, no revision', async () => {
      const requests = planeRequests(walk.plane);
      expect(requests.inferenceServiceReads).toBeGreaterThan(0);
      expect(requests.writes).toEqual([]);
    });
  });
});
