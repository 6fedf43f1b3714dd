/**
 * A Deployment named `<isvc>-engine` that the plane does not own, made with the machine's
 * real kubectl against the embedded API server: pinning goes on (revision, status), the
 * Deployment stays byte for byte as kubectl shows it, and one Warning event on the
 * InferenceService says why and how to fix it, however often the object is evaluated and
 * by however many workers. Both engine writers are covered: the direct one and the
 * rollout-aware one the functions use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventRecorder } from '../../shared/use-cases/record-event';
import { Resources } from '../../shared/domain/model/resources';
import { systemClock } from '../../shared/ports/clock';
import { createDirectWorkloadWriter } from '../../shared/use-cases/pinning';
import { rolloutAwareWorkloadWriter } from '../../shared/app/engine-workload-writer';
import { EventReason, WorkloadMessage } from '../../shared/domain/vocabulary';
import { KubectlHarness } from '../cluster/support';
import { applyRuntime, getIsvc, NS, REV_090, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
let kubectl: KubectlHarness;

beforeAll(async () => {
  world = await startPinningWorld();
  kubectl = new KubectlHarness(world.cluster);
  await applyRuntime(world.admin, seedRuntime('0.9'));
});

afterAll(async () => {
  kubectl?.cleanup();
  await world?.stop();
});

async function kubectlOk(...args: string[]): Promise<string> {
  const result = await kubectl.run(...args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** `kubectl get deploy <name> -o json`, once the simulated deployment controller has reported on it. */
async function settledDeploymentJson(name: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const json = await kubectlOk('get', 'deploy', name, '-n', NS, '-o', 'json');
    if ((JSON.parse(json) as { status?: { observedGeneration?: number } }).status?.observedGeneration === 1) return json;
    if (Date.now() > deadline) throw new Error(`Deployment ${name} never reported ready:\n${json}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface EventRow {
  type: string;
  reason: string;
  message: string;
  count: number;
}

async function kubectlWarnings(isvc: string): Promise<EventRow[]> {
  const out = await kubectlOk('get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${isvc},type=Warning`, '-o', 'json');
  return (JSON.parse(out) as { items: EventRow[] }).items.map(({ type, reason, message, count }) => ({ type, reason, message, count }));
}

/** A Deployment as OME's own controller renders one: its label and a controller reference with the InferenceService's uid. */
function omeRendered(name: string, uid: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}-engine
  namespace: ${NS}
  labels:
    ome.io/inferenceservice: ${name}
  ownerReferences:
    - apiVersion: ome.io/v1beta1
      kind: InferenceService
      name: ${name}
      uid: ${uid}
      controller: true
      blockOwnerDeletion: true
spec:
  replicas: 2
  selector:
    matchLabels: {ome.io/inferenceservice: ${name}, component: engine}
  template:
    metadata:
      labels: {ome.io/inferenceservice: ${name}, component: engine}
    spec:
      containers:
        - name: ome-container
          image: registry.example/ome-rendered:1
`;
}

const LABELLED_BY_HAND = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: labelled-engine
  namespace: ${NS}
  labels:
    ome.io/inferenceservice: labelled
spec:
  replicas: 2
  selector:
    matchLabels: {app: hand-made}
  template:
    metadata:
      labels: {app: hand-made}
    spec:
      containers:
        - name: web
          image: registry.example/hand-made:1
`;

describe('a same-named Deployment the plane does not own', () => {
  it.each([
    ['direct', 'handmade', 'it has no ome.io/inferenceservice label'],
    ['rollout-aware', 'labelled', 'it has no controller reference'],
    ['direct', 'omenative', 'it was not rendered by the control plane (no ome.io/rendered-from annotation)'],
    ['rollout-aware', 'omerendered', 'it was not rendered by the control plane (no ome.io/rendered-from annotation)'],
  ] as const)('is left byte for byte unchanged by the %s writer, and one Warning says why (%s)', async (writer, name, problem) => {
    world.deps.workloads = writer === 'direct' ? createDirectWorkloadWriter(world.client) : rolloutAwareWorkloadWriter(systemClock)(world.client);
    const isvc = await world.admin.create(Resources.inferenceServices, seedIsvc(name));
    if (name === 'handmade') await kubectlOk('create', 'deployment', `${name}-engine`, '-n', NS, '--image=registry.example/hand-made:1');
    else if (name === 'labelled') await kubectlOk('apply', '-f', kubectl.file(`${name}.yaml`, LABELLED_BY_HAND));
    else await kubectlOk('apply', '-f', kubectl.file(`${name}.yaml`, omeRendered(name, isvc.metadata.uid ?? '')));
    const before = await settledDeploymentJson(`${name}-engine`);

    const first = await world.pin(name);
    // Another hint, then another worker (its own event recorder): still one event.
    const again = await world.pin(name);
    world.deps.events = createEventRecorder(world.client);
    await world.pin(name);

    expect([first.workload, again.workload]).toEqual(['not-owned', 'not-owned']);
    expect((await getIsvc(world.admin, name)).status?.pinnedRevisionName).toBe(REV_090);
    expect(await kubectlOk('get', 'deploy', `${name}-engine`, '-n', NS, '-o', 'json')).toBe(before);
    expect(await kubectlWarnings(name)).toEqual([
      { type: 'Warning', reason: EventReason.deploymentNotOwned, message: WorkloadMessage.notOwned(NS, `${name}-engine`, problem), count: 1 },
    ]);
  });

  it('is rendered as soon as the user removes the one in the way', async () => {
    world.deps.workloads = createDirectWorkloadWriter(world.client);
    await kubectlOk('delete', 'deployment', 'handmade-engine', '-n', NS);

    const result = await world.pin('handmade');

    expect(result.workload).toBe('created');
    const rendered = await world.admin.get(Resources.deployments, NS, 'handmade-engine');
    expect(rendered.metadata.labels?.['ome.io/inferenceservice']).toBe('handmade');
  });
});
