import { describe, expect, it } from 'vitest';
import { applyRuntimeSpecDefaults } from '../../shared/domain/runtime/defaults';
import { normalizeGoJson } from '../../shared/domain/runtime/go-json';
import { deploymentOwnershipProblem, renderComponentDeployment, renderEngineDeployment, runtimeConfigures } from '../../shared/domain/runtime/workload';
import type { KubeObject } from '../../shared/ports/cluster';
import { buildSeedRuntimeSpec } from './fixtures/seed-runtime';

const isvc = { namespace: 'llama-demo', name: 'llama-3-2-3b-instruct', uid: 'uid-1', engine: { minReplicas: 1 } };
const spec = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.9')));

describe('renderEngineDeployment', () => {
  const rendered = renderEngineDeployment({ isvc, runtimeName: 'sglang-llama-3-2-3b', spec, revisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' });
  const podSpec = (rendered.spec as { template: { spec: { containers: Array<{ name: string; args: string[] }>; volumes: unknown; tolerations: unknown } } }).template.spec;

  it('renders the runner with the pinned args', () => {
    expect(podSpec.containers).toHaveLength(1);
    expect(podSpec.containers[0]?.name).toBe('ome-container');
    expect(podSpec.containers[0]?.args).toContain('--mem-frac=0.9');
    expect(podSpec.containers[0]?.args).toContain('--served-model-name=llama-3-2-3b-instruct');
    expect(podSpec.volumes).toEqual([{ name: 'dshm', emptyDir: { medium: 'Memory' } }]);
    expect(podSpec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('names, labels and annotates the Deployment', () => {
    expect(rendered.metadata).toMatchObject({
      name: 'llama-3-2-3b-instruct-engine',
      namespace: 'llama-demo',
      labels: { 'ome.io/inferenceservice': 'llama-3-2-3b-instruct', 'ome.io/component': 'engine', 'serving-runtime': 'sglang-llama-3-2-3b' },
      annotations: { 'ome.io/rendered-from': 'r-llama-demo-sglang-llama-3-2-3b-590753e8' },
      ownerReferences: [{ kind: 'InferenceService', name: 'llama-3-2-3b-instruct', uid: 'uid-1', controller: true }],
    });
    expect(rendered.spec).toMatchObject({ selector: { matchLabels: { 'ome.io/inferenceservice': 'llama-3-2-3b-instruct', 'ome.io/component': 'engine' } } });
  });

  it.each([
    [{ minReplicas: 3 }, 3],
    [{ minReplicas: 0 }, 0],
    [{}, 1],
    [undefined, 1],
  ])('replicas for engine %j is %d', (engine, replicas) => {
    expect(renderEngineDeployment({ isvc: { ...isvc, engine }, runtimeName: 'rt', spec }).spec).toMatchObject({ replicas });
  });

  it('records live when rendered from the live runtime', () => {
    expect(renderEngineDeployment({ isvc, runtimeName: 'rt', spec }).metadata.annotations).toEqual({ 'ome.io/rendered-from': 'live' });
  });

  it('renders byte-identical output for the same input', () => {
    const again = renderEngineDeployment({ isvc: { ...isvc }, runtimeName: 'sglang-llama-3-2-3b', spec: JSON.parse(JSON.stringify(spec)), revisionName: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' });
    expect(JSON.stringify(again)).toBe(JSON.stringify(rendered));
  });

  it('falls back to spec.containers when the engine has no runner', () => {
    const containerSpec = normalizeGoJson({ containers: [{ name: 'server', image: 'img', args: ['--x'] }] });
    const out = renderEngineDeployment({ isvc, runtimeName: 'rt', spec: containerSpec });
    expect((out.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers).toEqual([{ name: 'server', image: 'img', args: ['--x'], resources: {} }]);
  });
});

describe('renderEngineDeployment, whole objects', () => {
  const subject = { namespace: 'ns', name: 'chat' };

  it('renders a runner without a name as ome-container, fills placeholders everywhere, and merges node selectors', () => {
    const runtime = {
      nodeSelector: { zone: 'b', pool: 'gpu' },
      volumes: [{ name: 'spec-vol' }],
      engineConfig: {
        nodeSelector: { zone: 'a', arch: 'x86' },
        tolerations: [{ key: 't' }],
        runner: { name: '', image: 'img', args: ['--served-model-name={{.Name}}', '--ns={{.Namespace}}', 7], env: [{ name: 'N', value: '{{.Name}}/{{.Name}}' }], resources: { limits: null } },
      },
    };
    expect(renderEngineDeployment({ isvc: subject, runtimeName: 'rt', spec: runtime as never, revisionName: 'r-ns-rt-0123abcd' })).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'chat-engine',
        namespace: 'ns',
        labels: { 'ome.io/inferenceservice': 'chat', 'ome.io/component': 'engine', 'serving-runtime': 'rt' },
        annotations: { 'ome.io/rendered-from': 'r-ns-rt-0123abcd' },
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { 'ome.io/inferenceservice': 'chat', 'ome.io/component': 'engine' } },
        template: {
          metadata: { labels: { 'ome.io/inferenceservice': 'chat', 'ome.io/component': 'engine', 'serving-runtime': 'rt' }, annotations: { 'ome.io/rendered-from': 'r-ns-rt-0123abcd' } },
          spec: {
            containers: [{ name: 'ome-container', image: 'img', args: ['--served-model-name=chat', '--ns=ns', 7], env: [{ name: 'N', value: 'chat/chat' }], resources: { limits: null } }],
            volumes: [{ name: 'spec-vol' }],
            tolerations: [{ key: 't' }],
            nodeSelector: { arch: 'x86', pool: 'gpu', zone: 'b' },
          },
        },
      },
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['no containers, volumes, tolerations or selectors', {}, { containers: [] }],
    ['empty lists and a runner that is not an object', { volumes: [], engineConfig: { runner: 'x', tolerations: [], containers: [] }, containers: [{ name: 'c' }] }, { containers: [{ name: 'c' }] }],
    ['engine containers before spec containers, engine volumes before spec volumes', { volumes: [{ name: 's' }], containers: [{ name: 's' }], engineConfig: { containers: [{ name: 'e' }], volumes: [{ name: 'e' }] } }, { containers: [{ name: 'e' }], volumes: [{ name: 'e' }] }],
    ['a named runner keeps its name', { engineConfig: { runner: { name: 'main' }, nodeSelector: ['not', 'a', 'map'] } }, { containers: [{ name: 'main' }] }],
  ])('pod spec with %s', (_name, runtime, podSpec) => {
    const rendered = renderEngineDeployment({ isvc: subject, runtimeName: 'rt', spec: runtime as never });
    expect((rendered.spec as { template: { spec: unknown } }).template.spec).toEqual(podSpec);
  });
});

describe('deploymentOwnershipProblem', () => {
  const owner = { name: 'llama', uid: 'uid-1' };
  const ref = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'llama', uid: 'uid-1', controller: true };
  const deployment = (
    labels: Record<string, string> | undefined,
    ownerReferences: KubeObject['metadata']['ownerReferences'],
    annotations: Record<string, string> = { 'ome.io/rendered-from': 'live' },
  ): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'llama-engine', namespace: 'ns', annotations, ...(labels ? { labels } : {}), ...(ownerReferences ? { ownerReferences } : {}) },
  });
  const ours = { 'ome.io/inferenceservice': 'llama' };

  it.each([
    ['what the plane renders', deployment(ours, [ref]), owner, undefined],
    ['ours, with an owner of unknown uid', deployment(ours, [ref]), { name: 'llama' }, undefined],
    ['ours, beside other non-controller references', deployment(ours, [{ ...ref, kind: 'ConfigMap', name: 'x', uid: 'u', controller: false }, ref]), owner, undefined],
    ['made by hand', deployment({ app: 'llama' }, undefined), owner, 'it has no ome.io/inferenceservice label'],
    ['labelled for another InferenceService', deployment({ 'ome.io/inferenceservice': 'other' }, [ref]), owner, 'its ome.io/inferenceservice label names "other"'],
    ['labelled by hand, no owner', deployment(ours, undefined), owner, 'it has no controller reference'],
    ['an owner that is not the controller', deployment(ours, [{ ...ref, controller: false }]), owner, 'it has no controller reference'],
    ['controlled by something else', deployment(ours, [{ ...ref, apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }]), owner, 'it is controlled by ReplicaSet rs'],
    ['controlled by another group\'s InferenceService', deployment(ours, [{ ...ref, apiVersion: 'serving.kserve.io/v1beta1' }]), owner, 'it is controlled by InferenceService llama'],
    ['controlled by another InferenceService', deployment(ours, [{ ...ref, name: 'other' }]), owner, 'it is controlled by InferenceService other'],
    ['left by a deleted InferenceService of the same name', deployment(ours, [{ ...ref, uid: 'uid-0' }]), owner, 'its controller reference is to InferenceService llama uid uid-0, not uid-1'],
    ['rendered by OME\'s controller (same label and controller reference)', deployment(ours, [ref], { 'deployment.kubernetes.io/revision': '1' }), owner, 'it was not rendered by the control plane (no ome.io/rendered-from annotation)'],
    ['what the plane renders, checked against the render itself', renderEngineDeployment({ isvc: { namespace: 'ns', name: 'llama', uid: 'uid-1' }, runtimeName: 'rt', spec: {} }), owner, undefined],
  ])('%s', (_case, object, who, expected) => {
    expect(deploymentOwnershipProblem(object, who)).toBe(expected);
  });
});

describe('renderComponentDeployment', () => {
  const runtime = {
    engineConfig: { runner: { image: 'srt:v1' } },
    decoderConfig: { runner: { name: 'decoder', image: 'srt-decode:v1' }, tolerations: [{ key: 'gpu', operator: 'Exists' }] },
    routerConfig: { runner: { image: 'router:v1', args: ['--ns={{.Namespace}}'] } },
  };
  const subject = { ...isvc, decoder: { minReplicas: 4 }, router: { minReplicas: 2 } };

  it.each([
    ['decoder', 'llama-3-2-3b-instruct-decoder', 4, 'srt-decode:v1'],
    ['router', 'llama-3-2-3b-instruct-router', 2, 'router:v1'],
  ] as const)('renders the %s from its own config block, named and labelled as that component', (component, name, replicas, image) => {
    const rendered = renderComponentDeployment(component, { isvc: subject, runtimeName: 'rt', spec: runtime });
    expect(rendered.metadata).toMatchObject({ name, labels: { 'ome.io/component': component } });
    const deployment = rendered.spec as { replicas: number; selector: { matchLabels: Record<string, string> }; template: { spec: { containers: Array<{ image: string; args?: string[] }> } } };
    expect(deployment.replicas).toBe(replicas);
    expect(deployment.selector.matchLabels['ome.io/component']).toBe(component);
    expect(deployment.template.spec.containers[0]?.image).toBe(image);
  });

  it('fills placeholders in the router too', () => {
    const rendered = renderComponentDeployment('router', { isvc: subject, runtimeName: 'rt', spec: runtime });
    expect((rendered.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec.containers[0]?.args).toEqual(['--ns=llama-demo']);
  });

  it('renders the engine exactly as renderEngineDeployment does', () => {
    const input = { isvc, runtimeName: 'rt', spec };
    expect(JSON.stringify(renderComponentDeployment('engine', input))).toBe(JSON.stringify(renderEngineDeployment(input)));
  });

  it.each([
    ['engine', {}, true],
    ['decoder', runtime, true],
    ['decoder', { engineConfig: {} }, false],
    ['router', { routerConfig: {} }, true],
    ['router', null, false],
  ] as const)('runtimeConfigures(%s) over %j is %s', (component, runtimeSpec, expected) => {
    expect(runtimeConfigures(component, runtimeSpec)).toBe(expected);
  });
});
