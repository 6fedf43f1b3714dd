import type { KubeObject } from '../model/kube-object';
import { RENDERED_FROM_LIVE, WorkloadAnnotation, WorkloadLabel } from '../vocabulary';
import type { JsonValue } from './go-json';

/**
 * Renders the engine's Deployment for an InferenceService from its effective runtime spec
 * (the live spec, or a pinned revision's data). Deliberately small: one Deployment, the
 * runner container with the runtime's command and args, the engine's volumes, tolerations
 * and node selector, and `minReplicas` replicas. The output is built in a fixed key order
 * from its inputs only, so an unchanged input renders a byte-identical object and the
 * caller can compare before it writes.
 */

/** The components the renderer renders, each as one Deployment. */
export type RenderedComponent = 'engine' | 'decoder' | 'router';

/** The ISVC fields rendering reads. */
export interface WorkloadSubject {
  namespace: string;
  name: string;
  uid?: string | undefined;
  engine?: { minReplicas?: number | undefined } | undefined;
  decoder?: { minReplicas?: number | undefined } | undefined;
  router?: { minReplicas?: number | undefined } | undefined;
}

export interface RenderEngineInput {
  isvc: WorkloadSubject;
  runtimeName: string;
  /** The effective ServingRuntimeSpec (Go-shaped JSON). */
  spec: JsonValue;
  /** The revision the spec came from, or undefined for the live runtime. */
  revisionName?: string | undefined;
}

type JsonObject = { [key: string]: JsonValue };

/** The container name OME gives a runner that names none. */
export const DEFAULT_RUNNER_NAME = 'ome-container';

function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

function asList(value: JsonValue | undefined): JsonValue[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

/** Fills `{{.Name}}` and `{{.Namespace}}`, the placeholders the catalog runtimes use. */
function fillPlaceholders(value: JsonValue, isvc: WorkloadSubject): JsonValue {
  if (typeof value === 'string') return value.replaceAll('{{.Name}}', isvc.name).replaceAll('{{.Namespace}}', isvc.namespace);
  if (Array.isArray(value)) return value.map((item) => fillPlaceholders(item, isvc));
  const object = asObject(value);
  if (!object) return value;
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, fillPlaceholders(item, isvc)]));
}

function renderContainers(spec: JsonObject, engine: JsonObject, isvc: WorkloadSubject): JsonValue[] {
  const runner = asObject(engine.runner);
  if (runner) {
    const name = typeof runner.name === 'string' && runner.name !== '' ? runner.name : DEFAULT_RUNNER_NAME;
    return [fillPlaceholders({ ...runner, name }, isvc)];
  }
  return (asList(engine.containers) ?? asList(spec.containers) ?? []).map((c) => fillPlaceholders(c, isvc));
}

/** The Deployment's name for an InferenceService's engine. */
export function computeEngineDeploymentName(isvcName: string): string {
  return computeComponentDeploymentName(isvcName, 'engine');
}

/** A component's workload name as upstream names it: `<isvc>-engine`, `<isvc>-decoder`, `<isvc>-router`. */
export function computeComponentDeploymentName(isvcName: string, component: string): string {
  return `${isvcName}-${component}`;
}

/** The runtime spec field that configures each component. */
const CONFIG_FIELD: Record<RenderedComponent, string> = { engine: 'engineConfig', decoder: 'decoderConfig', router: 'routerConfig' };

/**
 * Renders the engine Deployment. Labels on the pods and the selector hold only the ISVC
 * and component, never the runtime or revision, because a Deployment's selector is
 * immutable; the revision is recorded in the `ome.io/rendered-from` annotation.
 */
export function renderEngineDeployment(input: RenderEngineInput): KubeObject {
  return renderComponentDeployment('engine', input);
}

/**
 * Whether the runtime spec configures `component`: the engine always renders; a
 * decoder or router renders only when the runtime carries its config block, since
 * nothing else says which image it runs.
 */
export function runtimeConfigures(component: RenderedComponent, spec: JsonValue): boolean {
  return component === 'engine' || asObject(asObject(spec)?.[CONFIG_FIELD[component]]) !== undefined;
}

/**
 * Renders one component's Deployment the way the engine's is rendered, from the
 * runtime's `<component>Config` block and the component's `minReplicas`.
 */
export function renderComponentDeployment(component: RenderedComponent, input: RenderEngineInput): KubeObject {
  const { isvc } = input;
  const spec = asObject(input.spec) ?? {};
  const engine = asObject(spec[CONFIG_FIELD[component]]) ?? {};
  const selector = { [WorkloadLabel.inferenceService]: isvc.name, [WorkloadLabel.component]: component };
  const labels = { ...selector, [WorkloadLabel.servingRuntime]: input.runtimeName };
  const renderedFrom = input.revisionName ?? RENDERED_FROM_LIVE;
  const nodeSelector = { ...(asObject(engine.nodeSelector) ?? {}), ...(asObject(spec.nodeSelector) ?? {}) };
  const podSpec: JsonObject = { containers: renderContainers(spec, engine, isvc) };
  const volumes = asList(engine.volumes) ?? asList(spec.volumes);
  if (volumes) podSpec.volumes = volumes;
  const tolerations = asList(engine.tolerations);
  if (tolerations) podSpec.tolerations = tolerations;
  if (Object.keys(nodeSelector).length > 0) podSpec.nodeSelector = Object.fromEntries(Object.entries(nodeSelector).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: computeComponentDeploymentName(isvc.name, component),
      namespace: isvc.namespace,
      labels,
      annotations: { [WorkloadAnnotation.renderedFrom]: renderedFrom },
      ...(isvc.uid
        ? { ownerReferences: [{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: isvc.name, uid: isvc.uid, controller: true }] }
        : {}),
    },
    spec: {
      replicas: isvc[component]?.minReplicas ?? 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels, annotations: { [WorkloadAnnotation.renderedFrom]: renderedFrom } },
        spec: podSpec,
      },
    },
  };
}

/** The InferenceService a rendered Deployment must belong to; without `uid`, any InferenceService of that name. */
export interface WorkloadOwner {
  name: string;
  uid?: string | undefined;
}

/**
 * Why the plane must not write this Deployment for `owner`, or undefined when it may. A
 * Deployment is the plane's when it carries the `ome.io/inferenceservice` label naming
 * the InferenceService and a controller reference to that InferenceService (same uid),
 * as infra/k8s/policy-owned-deployments.yaml admits, and the `ome.io/rendered-from`
 * annotation every render of the plane carries. OME's own controller sets the same label
 * and controller reference on the Deployments it renders, so the annotation is what tells
 * them apart. Any other Deployment of the same name (made by hand, rendered by OME's
 * controller, or left by a deleted InferenceService of the same name) is someone else's
 * and stays as it is. Checks in order; the first that fails is the reason.
 */
export function deploymentOwnershipProblem(deployment: KubeObject, owner: WorkloadOwner): string | undefined {
  const label = deployment.metadata.labels?.[WorkloadLabel.inferenceService];
  if (label === undefined) return `it has no ${WorkloadLabel.inferenceService} label`;
  if (label !== owner.name) return `its ${WorkloadLabel.inferenceService} label names ${JSON.stringify(label)}`;
  const controller = (deployment.metadata.ownerReferences ?? []).find((ref) => ref.controller === true);
  if (controller === undefined) return 'it has no controller reference';
  if (controller.kind !== 'InferenceService' || !controller.apiVersion.startsWith('ome.io/') || controller.name !== owner.name) {
    return `it is controlled by ${controller.kind} ${controller.name}`;
  }
  if (owner.uid !== undefined && controller.uid !== owner.uid) return `its controller reference is to InferenceService ${controller.name} uid ${controller.uid}, not ${owner.uid}`;
  if (deployment.metadata.annotations?.[WorkloadAnnotation.renderedFrom] === undefined) {
    return `it was not rendered by the control plane (no ${WorkloadAnnotation.renderedFrom} annotation)`;
  }
  return undefined;
}
