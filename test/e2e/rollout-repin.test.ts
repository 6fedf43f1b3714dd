/**
 * The "Repin a drifted rollout plan" guide, walked as its reader would: the control plane
 * as `npm start` starts it, the real `kubectl` and `kubectl ome` in a shell, the guide's
 * commands as it prints them and its outputs compared exactly (digests and run IDs, which
 * depend on the reader's service, by pattern and against the status they come from).
 *
 * Prerequisites, through kubectl: the namespace `prod`, a runtime, `chat` with one canary
 * group for the engine (a manual pause, then all traffic); its first revision deploys
 * directly, and a runtime change opens the run the guide repins.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT, captureEmfMetrics, eventually, explainView, runOnTerminal, sh, shOk, startRolloutWalk, type RolloutWalk } from './rollout-support';
import { ON_SERVER } from '../support/test-cluster';
import { planeRequests, prunedWrites, WALK_MODES } from './support';

const PLAN_COLUMNS =
  `kubectl get inferenceservice chat -n prod -o custom-columns='PLAN-READY:.status.conditions[?(@.type=="RolloutPlanReady")].reason,DRIFT:.status.conditions[?(@.type=="RolloutPlanDrift")].reason'`;
const REPIN_ANNOTATION = `kubectl get inferenceservice chat -n prod \\\n  -o jsonpath='{.metadata.annotations.ome\\.io/rollout-repin}'`;
const GROUP_DIGESTS = `kubectl get inferenceservice chat -n prod -o jsonpath='{range .status.rollout.groups[*]}{.index}{" "}{.observedDigest}{"\\n"}{end}'`;
const PROMPT = 'Confirm this exact action? [y/N]';
const DIGEST = /^rp1:[0-9a-f]{12}$/;

type Step = { capacity: string | number; traffic: number; pause?: Record<string, never> };
const manual = (capacity: string, traffic: number): Step => ({ capacity, traffic, pause: {} });
const immediate = (capacity: string | number, traffic: number): Step => ({ capacity, traffic });
// Admission refuses a canary whose last step is below 100% traffic or a capacity under
// "100%", as upstream's does; an absolute count (the engine's 4 replicas, or fewer) is
// the other final step upstream admits, so edits that only need a different plan vary it.
const FULL_BY_COUNT = 4;
const THREE_BY_COUNT = 3;

interface ChatStatus {
  metadata: { generation: number; annotations?: Record<string, string> };
  status: {
    observedGeneration?: number;
    rollout?: {
      activeRun?: { runID: string; openedAt: string; pinnedAt: string; plan: { groups: { portableDigest: string }[] } };
      lastRun?: { outcome: string; openedAt?: string; closedAt?: string };
      groups?: { index: number; observedDigest?: string }[];
    };
    canary?: { canaryRevisionHash?: string; currentStep?: number; observedTrafficWeight?: number; preStepHold?: boolean };
    components?: { engine?: { rolloutPhase?: string } };
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

/** The plan digest the guide computes: group digests joined by `|`, sha256, 12 hex. */
const planDigest = (groupDigests: string[]): string => `rp1:${createHash('sha256').update(groupDigests.join('|')).digest('hex').slice(0, 12)}`;

function isvcManifest(name: string, groups: unknown[], extra: Record<string, unknown> = {}, rollout: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: 'prod' },
    spec: {
      model: { name: 'chat-model' },
      runtime: { name: 'srt', kind: 'ServingRuntime' },
      engine: { minReplicas: 4, maxReplicas: 4 },
      ...extra,
      rollout: { ...rollout, groups },
    },
  });
}

const chatManifest = (steps: Step[], extraGroups: unknown[] = [], extra: Record<string, unknown> = {}, rollout: Record<string, unknown> = {}): string =>
  isvcManifest('chat', [{ components: ['engine'], canary: { steps } }, ...extraGroups], extra, rollout);

const prodManifest = [
  stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } }),
  stringify({
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name: 'srt', namespace: 'prod' },
    spec: {
      supportedModelFormats: [{ modelFormat: { name: 'safetensors' }, autoSelect: true }],
      engineConfig: { runner: { name: 'ome-container', image: 'docker.io/lmsysorg/sglang:v0.5.5', args: ['--mem-frac=0.9'] } },
    },
  }),
].join('---\n');

const policyManifest = (traffic: number): string =>
  stringify({
    apiVersion: 'ome.io/v1beta1',
    kind: 'RolloutPolicy',
    metadata: { name: 'guarded', namespace: 'prod' },
    spec: { canary: { steps: [manual('50%', traffic), immediate('100%', 100)] } },
  });

let walk: RolloutWalk;
let metrics: ReturnType<typeof captureEmfMetrics>;

async function chat(): Promise<ChatStatus> {
  return JSON.parse(await shOk(walk, 'kubectl get inferenceservice chat -n prod -o json')) as ChatStatus;
}

async function applyChat(steps: Step[], extraGroups: unknown[] = [], extra: Record<string, unknown> = {}, rollout: Record<string, unknown> = {}): Promise<number> {
  await writeFile(join(walk.workDir, 'chat.yaml'), chatManifest(steps, extraGroups, extra, rollout));
  expect(await shOk(walk, 'kubectl apply -f chat.yaml')).toBe('inferenceservice.ome.io/chat configured\n');
  return (await chat()).metadata.generation;
}

const planColumns = (drift: string) => `PLAN-READY   DRIFT\nPinned       ${drift}\n`;

/** Waits until the controller reported generation `generation` with DRIFT `drift`. */
async function driftReported(generation: number, drift: string): Promise<ChatStatus> {
  await eventually(`DRIFT ${drift}`, () => shOk(walk, PLAN_COLUMNS), (out) => out === planColumns(drift));
  return eventually(`generation ${generation} observed`, chat, (isvc) => isvc.status.observedGeneration === generation);
}

const repinAnnotationGone = () => eventually('the repin annotation removed', () => shOk(walk, REPIN_ANNOTATION), (out) => out === '');

/** `kubectl get events -n prod` rows for `reason`, as `TYPE REASON OBJECT MESSAGE`. */
async function eventRows(reason: string): Promise<string[]> {
  const out = await shOk(walk, 'kubectl get events -n prod');
  return out
    .split('\n')
    .map((line) => line.replace(/^\S+\s+/, '').replace(/\s{2,}/g, '  ').trim())
    .filter((line) => line.split('  ')[1] === reason);
}

const explain = () => shOk(walk, 'kubectl ome rollout explain chat -n prod');

/**
 * `ome_rollout_repin_total{namespace="prod",outcome}` counted once: where the plane applies
 * repins (standalone) as its EMF metric line; in delegate mode upstream's controller applies
 * them and counts them in its own metric, here its stand-in's count.
 */
async function repinCounted(outcome: 'applied' | 'rejected'): Promise<void> {
  const upstream = walk.upstream;
  if (upstream) {
    const count = await eventually(`the ${outcome} repin counted by upstream`, async () => upstream.controller.repinCounts().get(`prod/${outcome}`) ?? 0, (n) => n >= 1, 10_000);
    expect(count).toBe(1);
    return;
  }
  const counted = await eventually(`the ${outcome} repin metric`, async () => metrics.lines.filter((line) => line.includes('ome_rollout_repin_total') && line.includes(`"${outcome}"`)), (lines) => lines.length >= 1, 10_000);
  expect(JSON.parse(counted[0] ?? '{}')).toMatchObject({ namespace: 'prod', outcome, ome_rollout_repin_total: 1 });
}

// Walked twice: the plane as the cluster's controller, and beside upstream OME's (delegate).
// The block is not indented, so the guide's multi-line outputs stay verbatim.
describe.each(WALK_MODES)(`in %s mode${ON_SERVER}`, (mode) => {
beforeAll(async () => {
  // The functions print their EMF metrics, as in Lambda, so that the repin count is observable.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  metrics = captureEmfMetrics();
  walk = await startRolloutWalk(mode);
}, 120_000);

afterAll(async () => {
  await walk?.stop();
  metrics?.restore();
  delete process.env.POWERTOOLS_METRICS_DISABLED;
});

// Each step waits for the controller several times; on a loaded machine each wait can take tens of seconds.
describe('Repin a drifted rollout plan, walked with kubectl and kubectl ome', { timeout: 180_000 }, () => {
  let runID = '';
  let openedAt = '';
  /** The plan digests Step 2 printed. */
  let repinned = { pinned: '', requested: '' };

  it('sets up the prerequisites: a first revision deploys directly, a runtime change opens a pinned run', async () => {
    await writeFile(join(walk.workDir, 'prod.yaml'), prodManifest);
    await writeFile(join(walk.workDir, 'chat.yaml'), chatManifest([manual('25%', 10), immediate('100%', 100)]));
    // A second service whose plan has two canary groups, for a refusal below.
    const canaryOf = (component: string) => ({ components: [component], canary: { steps: [manual('50%', 10), immediate('100%', 100)] } });
    await writeFile(
      join(walk.workDir, 'multi.yaml'),
      isvcManifest('multi', [canaryOf('router'), canaryOf('engine')], { router: { minReplicas: 1 } }, { groupOrdering: 'Concurrent' }),
    );
    // A third whose group takes its progression from a RolloutPolicy, for DRIFT PolicyNewerThanRun.
    await writeFile(join(walk.workDir, 'guarded.yaml'), [policyManifest(10), isvcManifest('guarded', [{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }])].join('---\n'));
    expect(await shOk(walk, 'kubectl apply -f prod.yaml -f chat.yaml -f multi.yaml -f guarded.yaml')).toBe(
      'namespace/prod created\nservingruntime.ome.io/srt created\ninferenceservice.ome.io/chat created\ninferenceservice.ome.io/multi created\n' +
        'rolloutpolicy.ome.io/guarded created\ninferenceservice.ome.io/guarded created\n',
    );
    const direct = await eventually('the first revision deployed', () => shOk(walk, 'kubectl get deployment chat-engine -n prod -o jsonpath={.status.readyReplicas}').catch(() => ''), (out) => out === '4');
    expect(direct).toBe('4');
    const noRun = 'PLAN-READY    DRIFT\nNoActiveRun   InSync\n';
    expect(await eventually('the plan status reported', () => shOk(walk, PLAN_COLUMNS), (out) => out === noRun)).toBe(noRun);
    expect((await chat()).status.rollout?.activeRun).toBeUndefined();
    // multi and guarded too must have been pinned on the first revision before the runtime
    // changes, or they deploy the changed one directly and open no run.
    for (const name of ['multi', 'guarded']) {
      const planOf = PLAN_COLUMNS.replace('inferenceservice chat ', `inferenceservice ${name} `);
      expect(await eventually(`${name}'s plan status reported`, () => shOk(walk, planOf), (out) => out === noRun)).toBe(noRun);
    }

    await shOk(walk, `kubectl patch servingruntime srt -n prod --type=json -p '[{"op":"replace","path":"/spec/engineConfig/runner/args/0","value":"--mem-frac=0.85"}]'`);
    const opened = await eventually('a run opened and paused at its first step', chat, (isvc) => isvc.status.components?.engine?.rolloutPhase === 'Paused');
    const run = opened.status.rollout?.activeRun;
    expect(run?.runID).toMatch(/^chat-[0-9a-f]{12}$/);
    runID = run?.runID ?? '';
    openedAt = run?.openedAt ?? '';
    expect(await shOk(walk, PLAN_COLUMNS)).toBe(planColumns('InSync'));
    expect(opened.status.canary).toMatchObject({ currentStep: 0, observedTrafficWeight: 10 });
    expect(await shOk(walk, 'kubectl get deployment chat-engine-canary -n prod -o jsonpath={.spec.replicas}')).toBe('1');
    const openedEvents = await eventually('the RolloutRunOpened event', () => eventRows('RolloutRunOpened'), (rows) => rows.some((row) => row.includes(`run ${runID} opened (`)));
    expect(openedEvents.find((row) => row.includes(runID))).toMatch(/^Normal {2}RolloutRunOpened {2}inferenceservice\/chat {2}run chat-[0-9a-f]{12} opened \(rp1:[0-9a-f]{12}\)$/);
    for (const name of ['multi', 'guarded']) {
      const runOf = `kubectl get inferenceservice ${name} -n prod -o jsonpath={.status.rollout.activeRun.runID}`;
      await eventually(`${name}'s run opened`, () => shOk(walk, runOf), (out) => out.startsWith(`${name}-`));
    }

    // Created after the runtime change: deployed directly, no run to repin.
    await writeFile(join(walk.workDir, 'idle.yaml'), isvcManifest('idle', [{ components: ['engine'], canary: { steps: [manual('25%', 10), immediate('100%', 100)] } }]));
    await shOk(walk, 'kubectl apply -f idle.yaml');
  });

  it('Step 1: confirms the drift after an edit to the group\'s canary steps, and explain shows Effective and Live', async () => {
    expect(await shOk(walk, PLAN_COLUMNS)).toBe(planColumns('InSync'));
    const before = await chat();

    const generation = await applyChat([manual('25%', 5), immediate('100%', 100)]);
    const drifted = await driftReported(generation, 'SpecNewerThanRun');

    expect(await shOk(walk, PLAN_COLUMNS)).toBe('PLAN-READY   DRIFT\nPinned       SpecNewerThanRun\n');
    const live = drifted.status.rollout?.groups?.[0]?.observedDigest ?? '';
    const pinned = before.status.rollout?.activeRun?.plan.groups[0]?.portableDigest ?? '';
    expect(drifted.status.conditions?.find((c) => c.type === 'RolloutPlanDrift')?.message).toBe(
      `groups[0]: live render ${live} differs from pinned ${pinned}; the edit applies at the next run (or via ome.io/rollout-repin)`,
    );
    const out = await explain();
    expect(explainView(out, 'Effective')).toEqual(
      expect.arrayContaining(['DRIFT  True/SpecNewerThanRun; evidence=Reported', `CONFIG  digest=${pinned}`, 'STEP 1/2  capacity=25%; traffic=10%; gate=Manual']),
    );
    expect(explainView(out, 'Live')).toEqual(expect.arrayContaining([`CONFIG  digest=${live}`, 'STEP 1/2  capacity=25%; traffic=5%; gate=Manual']));
    expect(explainView(out, 'Effective')).toContain('ISSUES  EpochUnverifiable');
  });

  it('Step 2: repins the run with the plugin, answering y at the prompt', async () => {
    const isvc = await chat();
    const pinned = planDigest([isvc.status.rollout?.activeRun?.plan.groups[0]?.portableDigest ?? '']);
    const requested = planDigest([isvc.status.rollout?.groups?.[0]?.observedDigest ?? '']);

    // --dry-run server: the API server checks the patch and stores nothing.
    const dryRun = await sh(walk, 'kubectl ome rollout repin chat -n prod --dry-run server --yes');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('dry-run                 server\naccepted                Yes\napplied                 No\n');
    expect(dryRun.stdout).toContain('message                 API dry-run accepted; no changes persisted.\n');
    expect(await shOk(walk, REPIN_ANNOTATION)).toBe('');

    const result = await runOnTerminal(walk, 'kubectl ome rollout repin chat -n prod', { prompt: PROMPT, answer: 'y' });

    expect(result.terminal).toContain('ALPHA guarded rollout repin (not controller convergence)');
    expect(result.terminal).toContain(`Confirm this exact action? [y/N] y`);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`FIELD                   VALUE
action                  rollout repin
target                  InferenceService/prod/chat
dry-run                 none
accepted                Yes
applied                 Yes
run-id                  ${runID}
pinned-plan-digest      ${pinned}
requested-plan-digest   ${requested}
group-count             1
message                 API accepted repin annotation; controller consumption...
follow-up               kubectl ome rollout explain chat -n prod --context=pr...
hint                    Use -o json or -o yaml for full values.
`);
    repinned = { pinned, requested };
    expect(runID).toMatch(/^chat-[0-9a-f]{12}$/);
    expect([pinned, requested]).toEqual([expect.stringMatching(DIGEST), expect.stringMatching(DIGEST)]);
    // The preview names the kubeconfig's context, which the follow-up (cut at 56 characters) ends with.
    expect(result.terminal).toMatch(new RegExp(`Context +${CONTEXT}\r\n`));
  });

  it('Step 3: the annotation goes, a RolloutPlanRepinned event, DRIFT InSync, and explain\'s Effective view shows the new plan', async () => {
    expect(await repinAnnotationGone()).toBe('');
    const rows = await eventually('the RolloutPlanRepinned event', () => eventRows('RolloutPlanRepinned'), (found) => found.length === 1);
    const [type, reason, object, message] = rows[0]?.split('  ') ?? [];
    expect([type, reason, object]).toEqual(['Normal', 'RolloutPlanRepinned', 'inferenceservice/chat']);
    expect(message).toMatch(new RegExp(`^run ${runID} repinned: rp1:[0-9a-f]{12} -> rp1:[0-9a-f]{12}$`));
    expect(message).toBe(`run ${runID} repinned: ${repinned.pinned} -> ${repinned.requested}`);

    expect(await eventually('DRIFT InSync', () => shOk(walk, PLAN_COLUMNS), (out) => out === planColumns('InSync'))).toBe('PLAN-READY   DRIFT\nPinned       InSync\n');
    const after = await chat();
    const run = after.status.rollout?.activeRun;
    expect(run).toMatchObject({ runID, openedAt });
    expect(planDigest([run?.plan.groups[0]?.portableDigest ?? ''])).toBe(repinned.requested);
    const effective = explainView(await explain(), 'Effective');
    expect(effective).toEqual(
      expect.arrayContaining([
        'DRIFT  False/InSync; evidence=Reported',
        `CONFIG  digest=${after.status.rollout?.groups?.[0]?.observedDigest ?? ''}`,
        'STEP 1/2  capacity=25%; traffic=5%; gate=Manual',
      ]),
    );
  });

  it('counts the applied repin in ome_rollout_repin_total by namespace and outcome', async () => {
    await repinCounted('applied');
  });

  it('repins by annotation, with the digest computed in the shell as the guide does', async () => {
    const generation = await applyChat([manual('25%', 5), immediate(FULL_BY_COUNT, 100)]);
    const drifted = await driftReported(generation, 'SpecNewerThanRun');

    const digests = await shOk(walk, GROUP_DIGESTS);
    expect(digests).toMatch(/^0 rp1:[0-9a-f]{12}\n$/);
    const groupDigest = digests.slice(2).trim();
    expect(groupDigest).toBe(drifted.status.rollout?.groups?.[0]?.observedDigest);
    const hash = await shOk(walk, `printf '%s' '${groupDigest}' | sha256sum | cut -c1-12`);
    expect(hash).toMatch(/^[0-9a-f]{12}\n$/);
    expect(`rp1:${hash.trim()}`).toBe(planDigest([groupDigest]));

    expect(await shOk(walk, `kubectl annotate inferenceservice chat -n prod ome.io/rollout-repin=rp1:${hash.trim()}`)).toBe('inferenceservice.ome.io/chat annotated\n');
    expect(await repinAnnotationGone()).toBe('');
    expect(await eventually('DRIFT InSync', () => shOk(walk, PLAN_COLUMNS), (out) => out === planColumns('InSync'))).toBe(planColumns('InSync'));
    const rows = await eventually('a second RolloutPlanRepinned event', () => eventRows('RolloutPlanRepinned'), (found) => found.length === 2);
    expect(rows.some((row) => row.endsWith(`-> rp1:${hash.trim()}`))).toBe(true);
    expect((await chat()).status.rollout?.activeRun).toMatchObject({ runID, openedAt });
  });

  it('reports an edit to a RolloutPolicy as PolicyNewerThanRun, and repins it with the plugin', async () => {
    const columns = PLAN_COLUMNS.replace('chat', 'guarded');
    expect(await shOk(walk, columns)).toBe(planColumns('InSync'));
    await writeFile(join(walk.workDir, 'guarded.yaml'), policyManifest(20));
    expect(await shOk(walk, 'kubectl apply -f guarded.yaml')).toBe('rolloutpolicy.ome.io/guarded configured\n');
    expect(await eventually('DRIFT PolicyNewerThanRun', () => shOk(walk, columns), (out) => out === planColumns('PolicyNewerThanRun'))).toBe(
      'PLAN-READY   DRIFT\nPinned       PolicyNewerThanRun\n',
    );
    // The policy's own status, as upstream's status controller writes it: the digest the
    // group would now pin, the one group using it, and its Ready and InUse conditions.
    const live = (await shOk(walk, "kubectl get inferenceservice guarded -n prod -o jsonpath='{.status.rollout.groups[0].observedDigest}'")).trim();
    const policyColumns = "kubectl get rolloutpolicy guarded -n prod -o custom-columns='READY:.status.conditions[?(@.type==\"Ready\")].reason,IN-USE:.status.conditions[?(@.type==\"InUse\")].reason,REFS:.status.attachedGroups,DIGEST:.status.portableDigest' --no-headers";
    const policyRow = ['BodyValid', 'Attached', '1', live];
    const cells = async () => (await shOk(walk, policyColumns)).trim().split(/\s+/);
    expect(await eventually('the RolloutPolicy status', cells, (out) => out.join(' ') === policyRow.join(' '))).toEqual(policyRow);

    const result = await sh(walk, 'kubectl ome rollout repin guarded -n prod --yes');
    expect([result.code, result.stderr.split('\n')[0]]).toEqual([0, 'ALPHA guarded rollout repin (not controller convergence)']);
    expect(result.stdout).toContain('target                  InferenceService/prod/guarded\ndry-run                 none\naccepted                Yes\napplied                 Yes\n');
    expect(await eventually('DRIFT InSync', () => shOk(walk, columns), (out) => out === planColumns('InSync'))).toBe(planColumns('InSync'));
    const explained = explainView(await shOk(walk, 'kubectl ome rollout explain guarded -n prod'), 'Effective');
    expect(explained).toContain('STEP 1/2  capacity=50%; traffic=20%; gate=Manual');
  });

  describe('refusals: nothing changes and the plugin exits 1', () => {
    const refusal = async (name: string, reason: string) => {
      const result = await sh(walk, `kubectl ome rollout repin ${name} -n prod --yes`);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 1, stdout: '', stderr: `error: rollout repin refused: ${reason}\n` });
    };

    it('the current plan is already pinned', async () => {
      await refusal('chat', 'the current plan is already pinned');
    });

    it('no active pinned run', async () => {
      await eventually('idle deployed directly', () => shOk(walk, 'kubectl get inferenceservice idle -n prod -o jsonpath={.status.observedGeneration}'), (out) => out === '1');
      await refusal('idle', 'no active pinned run');
    });

    it('this command supports at most one canary group', async () => {
      await refusal('multi', 'this command supports at most one canary group');
    });

    it('live and pinned rollout topology differ (a group added), until the edit is undone', async () => {
      // The added group's router is declared, and the two groups run concurrently, as admission requires.
      const added = await applyChat([manual('25%', 5), immediate(FULL_BY_COUNT, 100)], [{ components: ['router'] }], { router: { minReplicas: 1 } }, { groupOrdering: 'Concurrent' });
      await driftReported(added, 'SpecNewerThanRun');
      // A group that sets no progression reports the default blue-green digest, never a blank one.
      expect(await shOk(walk, GROUP_DIGESTS)).toMatch(/^0 rp1:[0-9a-f]{12}\n1 rp1:cca45ec1fb0f\n$/);
      await refusal('chat', 'live and pinned rollout topology differ');
      const undone = await applyChat([manual('25%', 5), immediate(FULL_BY_COUNT, 100)]);
      await driftReported(undone, 'InSync');
      await refusal('chat', 'the current plan is already pinned');
    });

    it('controller plan evidence is missing, stale or inconsistent (an edit the controller has not reported yet)', async () => {
      // The bus is slow: nothing reaches the functions until released.
      const release = walk.hold(() => true);
      let generation: number;
      try {
        generation = await applyChat([manual('50%', 30), immediate(FULL_BY_COUNT, 100)]);
        await refusal('chat', 'controller plan evidence is missing, stale or inconsistent');
      } finally {
        release();
      }
      await driftReported(generation, 'SpecNewerThanRun');
    });

    it('a rollout action mailbox is already present (a promote waits)', async () => {
      const release = walk.hold(() => true);
      try {
        const target = (await chat()).status.canary?.canaryRevisionHash ?? '';
        expect(await shOk(walk, `kubectl annotate inferenceservice chat -n prod ome.io/rollout-promote=${target}`)).toBe('inferenceservice.ome.io/chat annotated\n');
        await refusal('chat', 'a rollout action mailbox is already present');
        await shOk(walk, 'kubectl annotate inferenceservice chat -n prod ome.io/rollout-promote-');
      } finally {
        release();
      }
    });

    it('exits 3 when the InferenceService changes between the preview and the answer', async () => {
      const result = await runOnTerminal(walk, 'kubectl ome rollout repin chat -n prod', {
        prompt: PROMPT,
        answer: 'y',
        beforeAnswer: async () => {
          await shOk(walk, 'kubectl label inferenceservice chat -n prod reviewed=yes');
        },
      });
      expect(result.code).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.terminal).toContain('error: guarded annotation patch rejected; refresh rollout explain and retry explicitly');
      expect(await shOk(walk, REPIN_ANNOTATION)).toBe('');
    });
  });

  it('the controller rejects a digest previewed before a concurrent edit, and removes the annotation', async () => {
    const previewed = planDigest([(await shOk(walk, GROUP_DIGESTS)).slice(2).trim()]);
    const generation = await applyChat([manual('50%', 30), immediate(THREE_BY_COUNT, 100)]);
    await driftReported(generation, 'SpecNewerThanRun');
    // pin may record the generation before rollout-run has recomputed the plan's digests.
    const digestOf = (isvc: ChatStatus): string => planDigest([isvc.status.rollout?.groups?.[0]?.observedDigest ?? '']);
    const edited = await eventually('the edited plan\'s digest observed', chat, (isvc) => digestOf(isvc) !== previewed);
    const current = digestOf(edited);
    expect(current).not.toBe(previewed);

    expect(await shOk(walk, `kubectl annotate inferenceservice chat -n prod ome.io/rollout-repin=${previewed}`)).toBe('inferenceservice.ome.io/chat annotated\n');
    expect(await repinAnnotationGone()).toBe('');
    const rows = await eventually('the RolloutRepinRejected event', () => eventRows('RolloutRepinRejected'), (found) => found.length === 1);
    expect(rows[0]).toBe(
      `Warning  RolloutRepinRejected  inferenceservice/chat  repin rejected: expected render digest ${previewed} but the current render is ${current} (a concurrent edit landed; re-issue with the current digest)`,
    );
    expect(await shOk(walk, PLAN_COLUMNS)).toBe(planColumns('SpecNewerThanRun'));
    await repinCounted('rejected');
  });

  it('holds the canary before a step whose traffic rose (CanaryPreStep), Pending then Paused, until the promote annotation releases it', async () => {
    const before = await chat();
    expect(before.status.canary?.observedTrafficWeight).toBeLessThan(30);
    // Deliveries to rollout-run wait, so the canary's scaling to the new capacity can be seen.
    const release = walk.hold((functionName) => functionName === 'rollout-run');
    let target = '';
    try {
      expect((await sh(walk, 'kubectl ome rollout repin chat -n prod --yes')).code).toBe(0);
      await repinAnnotationGone();
      const pending = await eventually('PHASE Pending', explain, (out) => explainView(out, 'Effective').includes('PHASE  Pending'));
      const effective = explainView(pending, 'Effective');
      expect(effective).toEqual(expect.arrayContaining(['HOLD  CanaryPreStep; evidence=Reported', 'STEP 1/2  capacity=50%; traffic=30%; gate=Manual']));
      target = /target=([0-9a-f]{8})/.exec(effective.find((row) => row.startsWith('REVISIONS')) ?? '')?.[1] ?? '';
      expect(target).toBe(before.status.canary?.canaryRevisionHash);
      const canaryReplicas = () => shOk(walk, 'kubectl get deployment chat-engine-canary -n prod -o jsonpath={.spec.replicas}');
      expect(await eventually('the canary scaled to the new step\'s capacity', canaryReplicas, (out) => out === '2')).toBe('2');
      const refused = await sh(walk, 'kubectl ome rollout promote chat -n prod --yes');
      expect([refused.code, refused.stderr]).toEqual([1, 'error: action refused: promote requires an active indefinite manual gate; analysis requires explicit override\n']);
    } finally {
      release();
    }

    const paused = await eventually('PHASE Paused', explain, (out) => explainView(out, 'Effective').includes('PHASE  Paused'));
    expect(explainView(paused, 'Effective')).toContain('HOLD  CanaryPreStep; evidence=Reported');
    expect((await chat()).status.canary).toMatchObject({ preStepHold: true, observedTrafficWeight: before.status.canary?.observedTrafficWeight });
    expect((await sh(walk, 'kubectl ome rollout promote chat -n prod --yes')).code).toBe(1);

    expect(await shOk(walk, `kubectl annotate inferenceservice chat -n prod ome.io/rollout-promote=${target}`)).toBe('inferenceservice.ome.io/chat annotated\n');
    // The controller consumes the annotation after it writes the status.
    const released = await eventually('the hold released and the annotation consumed', chat, (isvc) => isvc.status.canary?.preStepHold === false && !isvc.metadata.annotations?.['ome.io/rollout-promote']);
    expect(released.status.canary).toMatchObject({ currentStep: 0, observedTrafficWeight: 30 });
    expect(released.metadata.annotations?.['ome.io/rollout-promote']).toBeUndefined();
    const view = explainView(await explain(), 'Effective');
    expect(view.some((row) => row.startsWith('HOLD'))).toBe(false);
    expect(view).toContain('PHASE  Paused');

    // The step's own manual gate then applies as usual: the plugin's promote passes it, and the run completes.
    expect((await sh(walk, 'kubectl ome rollout promote chat -n prod --yes')).code).toBe(0);
    const done = await eventually('the run completed', chat, (isvc) => isvc.status.rollout?.lastRun?.outcome === 'Completed');
    // Upstream's lastRun names the run by its openedAt (no run ID is kept there).
    expect(done.status.rollout?.lastRun).toMatchObject({ outcome: 'Completed', openedAt });
    expect(done.status.rollout?.lastRun).not.toHaveProperty('runID');
    expect(await shOk(walk, PLAN_COLUMNS)).toBe('PLAN-READY    DRIFT\nNoActiveRun   InSync\n');
  });

  it('left nothing for the API server to prune: every write fits the CRDs, which mirror upstream OME', () => {
    expect(prunedWrites(walk.plane)).toEqual([]);
  });
});

it.runIf(mode === 'delegate')('beside upstream\'s controller, the plane read the InferenceService and wrote nothing to the cluster: no status, no workload, no consumed annotation', () => {
  const requests = planeRequests(walk.plane);
  expect(requests.inferenceServiceReads).toBeGreaterThan(0);
  expect(requests.writes).toEqual([]);
});
});
