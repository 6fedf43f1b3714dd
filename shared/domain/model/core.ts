import type { KubeObject, ObjectMeta } from './kube-object';
import type { Container, PodSpecFields } from './pod';

/**
 * apps/v1 ControllerRevision: a runtime revision. `data` holds the resolved runtime spec
 * as hashed; `revision` is always 1 for runtime revisions.
 */
export interface ControllerRevision extends KubeObject {
  kind: 'ControllerRevision';
  data?: unknown;
  revision: number;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface PodTemplateSpec {
  metadata?: Partial<ObjectMeta>;
  spec: PodSpecFields & { containers: Container[] };
}

/** apps/v1 Deployment, as far as rendering and rollout read it. */
export interface Deployment extends KubeObject {
  kind: 'Deployment';
  spec: {
    replicas?: number;
    selector: LabelSelector;
    template: PodTemplateSpec;
    strategy?: unknown;
    [field: string]: unknown;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }>;
  };
}

/** core/v1 ObjectReference, as an Event's `involvedObject`. */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

/** core/v1 Event: what `kubectl get events` and `kubectl describe` show. */
export interface Event extends KubeObject {
  kind: 'Event';
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  type?: EventType;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  eventTime?: string | null;
  reportingComponent?: string;
  reportingInstance?: string;
  action?: string;
}

export interface Namespace extends KubeObject {
  kind: 'Namespace';
  status?: { phase?: 'Active' | 'Terminating' };
}
