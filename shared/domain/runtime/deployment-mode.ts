/**
 * A component's deployment mode, resolved in upstream's order (OP
 * `pkg/controller/v1beta1/inferenceservice/utils/deployment.go`@4dfb96b1; D
 * `concepts/architecture/deployment-modes.md`, "How OME resolves the mode"). Pure: the
 * rollout writer, the rollout runs and `kubectl ome runtime effective` all ask here.
 */
import { Annotation } from '../vocabulary';

export const DeploymentMode = {
  raw: 'RawDeployment',
  omeNative: 'OMENative',
  /** Deprecated upstream (LeaderWorkerSet); selected only by an annotation. */
  multiNode: 'MultiNode',
  virtual: 'VirtualDeployment',
} as const;
export type DeploymentModeName = (typeof DeploymentMode)[keyof typeof DeploymentMode];

/** Where the mode came from, named as `kubectl ome runtime effective` prints it. */
export type DeploymentModeSource = 'ServiceAnnotation' | 'ComponentAnnotation' | 'ServiceSpec' | 'LeaderWorkerShape' | 'Default';

export type ComponentName = 'engine' | 'decoder' | 'router';

/** The parts of a component spec (the InferenceService's, or the runtime's `<component>Config`) the mode reads. */
export interface ComponentModeFields {
  annotations?: Record<string, string> | undefined;
  leader?: unknown;
  worker?: unknown;
}

export interface DeploymentModeInput {
  component: ComponentName;
  /** The InferenceService's `metadata.annotations`: only `VirtualDeployment` counts there. */
  serviceAnnotations?: Record<string, string> | undefined;
  /** `spec.deploymentMode`. */
  specMode?: string | undefined;
  /** `spec.<component>`. */
  service?: ComponentModeFields | undefined;
  /** The runtime's `engineConfig`, `decoderConfig` or `routerConfig`, when known. */
  runtime?: ComponentModeFields | undefined;
}

export interface ResolvedDeploymentMode {
  mode: DeploymentModeName;
  source: DeploymentModeSource;
}

const MODES: ReadonlySet<string> = new Set(Object.values(DeploymentMode));

function validMode(value: string | undefined): DeploymentModeName | undefined {
  return value !== undefined && MODES.has(value) ? (value as DeploymentModeName) : undefined;
}

/**
 * The first of these that sets a mode wins:
 * 1. `ome.io/deploymentMode: VirtualDeployment` on the InferenceService (every component);
 * 2. the component's `ome.io/deploymentMode` annotation, from the InferenceService's
 *    component merged over the runtime's (the InferenceService's value wins, even one
 *    that is not a mode, which is then skipped as upstream skips it);
 * 3. `spec.deploymentMode`;
 * 4. a `leader` or `worker` on an engine or decoder (InferenceService or runtime): OMENative;
 * 5. RawDeployment.
 */
export function resolveDeploymentMode(input: DeploymentModeInput): ResolvedDeploymentMode {
  if (input.serviceAnnotations?.[Annotation.deploymentMode] === DeploymentMode.virtual) {
    return { mode: DeploymentMode.virtual, source: 'ServiceAnnotation' };
  }
  const merged = { ...(input.runtime?.annotations ?? {}), ...(input.service?.annotations ?? {}) };
  const annotated = validMode(merged[Annotation.deploymentMode]);
  if (annotated) return { mode: annotated, source: 'ComponentAnnotation' };
  const specMode = validMode(input.specMode);
  if (specMode) return { mode: specMode, source: 'ServiceSpec' };
  if (input.component !== 'router') {
    const shaped = [input.service, input.runtime].some((fields) => fields?.leader != null || fields?.worker != null);
    if (shaped) return { mode: DeploymentMode.omeNative, source: 'LeaderWorkerShape' };
  }
  return { mode: DeploymentMode.raw, source: 'Default' };
}

/**
 * Whether the InferenceService itself declares the component OMENative, with the
 * component's annotation or `spec.deploymentMode`: what upstream's webhook asks of a
 * component in a rollout group (a `leader`, a `worker` or the runtime's annotation does
 * not count there).
 */
export function declaresOmeNative(input: Omit<DeploymentModeInput, 'runtime'>): boolean {
  const resolved = resolveDeploymentMode({ ...input, runtime: undefined });
  return resolved.mode === DeploymentMode.omeNative && (resolved.source === 'ComponentAnnotation' || resolved.source === 'ServiceSpec');
}
