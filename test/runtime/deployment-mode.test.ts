/**
 * A component's deployment mode in upstream's order (OP utils/deployment.go@4dfb96b1; D
 * concepts/architecture/deployment-modes.md): the InferenceService's VirtualDeployment,
 * the component's annotation (InferenceService over runtime), spec.deploymentMode, a
 * leader or worker on an engine or decoder, then RawDeployment.
 */
import { describe, expect, it } from 'vitest';
import { usesOmeNative } from '../../shared/use-cases/rollout-runs/workloads';
import { declaresOmeNative, resolveDeploymentMode, type DeploymentModeInput } from '../../shared/domain/runtime/deployment-mode';

const annotated = (mode: string) => ({ annotations: { 'ome.io/deploymentMode': mode } });

describe('resolveDeploymentMode', () => {
  it.each<[string, DeploymentModeInput, string, string]>([
    ['nothing set', { component: 'engine', service: {} }, 'RawDeployment', 'Default'],
    ['the component annotation wins over the spec', { component: 'engine', specMode: 'OMENative', service: annotated('RawDeployment') }, 'RawDeployment', 'ComponentAnnotation'],
    ['the runtime\'s component annotation wins over the spec', { component: 'engine', specMode: 'RawDeployment', service: {}, runtime: annotated('OMENative') }, 'OMENative', 'ComponentAnnotation'],
    ['the InferenceService\'s annotation wins over the runtime\'s', { component: 'decoder', service: annotated('RawDeployment'), runtime: annotated('OMENative') }, 'RawDeployment', 'ComponentAnnotation'],
    ['an annotation that is not a mode is skipped', { component: 'engine', specMode: 'OMENative', service: annotated('Fast') }, 'OMENative', 'ServiceSpec'],
    ['the InferenceService\'s invalid value hides the runtime\'s (merged first)', { component: 'engine', service: annotated('Fast'), runtime: annotated('OMENative') }, 'RawDeployment', 'Default'],
    ['the deprecated MultiNode by annotation', { component: 'engine', service: { ...annotated('MultiNode'), leader: {} } }, 'MultiNode', 'ComponentAnnotation'],
    ['the spec wins over a leader/worker shape', { component: 'engine', specMode: 'RawDeployment', service: { worker: {} } }, 'RawDeployment', 'ServiceSpec'],
    ['a spec value that is not a mode is skipped', { component: 'engine', specMode: 'Fast', service: { leader: {} } }, 'OMENative', 'LeaderWorkerShape'],
    ['an engine leader makes OMENative', { component: 'engine', service: { leader: {} } }, 'OMENative', 'LeaderWorkerShape'],
    ['a decoder worker from the runtime makes OMENative', { component: 'decoder', service: {}, runtime: { worker: { size: 2 } } }, 'OMENative', 'LeaderWorkerShape'],
    ['a router never takes the shape rule', { component: 'router', service: { leader: {}, worker: {} } }, 'RawDeployment', 'Default'],
    ['a router follows the spec', { component: 'router', specMode: 'OMENative', service: {} }, 'OMENative', 'ServiceSpec'],
    ['VirtualDeployment on the InferenceService wins over everything', { component: 'engine', serviceAnnotations: { 'ome.io/deploymentMode': 'VirtualDeployment' }, service: annotated('OMENative') }, 'VirtualDeployment', 'ServiceAnnotation'],
    ['another mode on the InferenceService\'s own annotations sets nothing', { component: 'engine', serviceAnnotations: { 'ome.io/deploymentMode': 'OMENative' }, service: {} }, 'RawDeployment', 'Default'],
  ])('%s', (_case, input, mode, source) => {
    expect(resolveDeploymentMode(input)).toEqual({ mode, source });
  });
});

describe('declaresOmeNative (what upstream asks of a component in a rollout group)', () => {
  it.each<[string, Omit<DeploymentModeInput, 'runtime'>, boolean]>([
    ['the component annotation', { component: 'engine', service: annotated('OMENative') }, true],
    ['spec.deploymentMode', { component: 'decoder', specMode: 'OMENative', service: {} }, true],
    ['a leader/worker shape does not count', { component: 'engine', service: { leader: {}, worker: {} } }, false],
    ['nothing declared', { component: 'engine', service: {} }, false],
    ['declared RawDeployment', { component: 'engine', specMode: 'OMENative', service: annotated('RawDeployment') }, false],
  ])('%s', (_case, input, expected) => {
    expect(declaresOmeNative(input)).toBe(expected);
  });
});

describe('usesOmeNative (whether an engine in a rollout group rolls through runs)', () => {
  const isvc = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'chat', ...(annotations ? { annotations } : {}) },
    spec,
  });

  it.each<[string, ReturnType<typeof isvc>, boolean]>([
    ['OMENative in the spec', isvc({ deploymentMode: 'OMENative', engine: {} }), true],
    ['OMENative on the engine', isvc({ engine: annotated('OMENative') }), true],
    ['nothing declared (the plane\'s leniency)', isvc({ engine: {} }), true],
    ['RawDeployment in the spec', isvc({ deploymentMode: 'RawDeployment', engine: {} }), false],
    ['RawDeployment on the engine over OMENative in the spec', isvc({ deploymentMode: 'OMENative', engine: annotated('RawDeployment') }), false],
    ['VirtualDeployment on the InferenceService', isvc({ engine: {} }, { 'ome.io/deploymentMode': 'VirtualDeployment' }), false],
    ['RawDeployment on the InferenceService\'s own annotations sets nothing', isvc({ engine: {} }, { 'ome.io/deploymentMode': 'RawDeployment' }), true],
  ])('%s', (_case, object, expected) => {
    expect(usesOmeNative(object)).toBe(expected);
  });

  it('reads the named component\'s own annotation', () => {
    const object = isvc({ deploymentMode: 'OMENative', engine: {}, router: annotated('RawDeployment') });
    expect([usesOmeNative(object, 'engine'), usesOmeNative(object, 'router'), usesOmeNative(object, 'decoder')]).toEqual([true, false, true]);
  });
});
