/**
 * The requests the plane and `kubectl ome` send to an API server, as a table for the
 * differential suite (conformance.test.ts): each case runs in a namespace of its own on the
 * embedded API server and on kube-apiserver, and what its answers hold is compared.
 *
 * KNOWN_DEVIATIONS lists the differences the embedded server keeps, each with its reason
 * (docs/embedded-cluster.md, "Conformance with kube-apiserver", shows the same table). The
 * suite fails on any other difference, and on a listed one that no longer differs.
 */

/** Who sends a request: the operator, or a ServiceAccount of the suite (conformance.test.ts makes them). */
export type Identity = 'admin' | 'nobody' | 'reader';

/** The ServiceAccounts behind the identities, in namespace `ome`; `reader` may get InferenceServices where a case binds it. */
export const SUITE_ACCOUNTS = { nobody: 'conformance-nobody', reader: 'conformance-reader' } as const;

/**
 * What of an answer is compared: the HTTP status code; the Status's `reason`, `message` and
 * `details`; the body of an answer that is not a Status (normalised: server-set fields
 * removed); the `Warning` headers; the events of a watch.
 */
export type Aspect = 'code' | 'reason' | 'message' | 'details' | 'body' | 'warnings' | 'events';
export const ALL_ASPECTS: readonly Aspect[] = ['code', 'reason', 'message', 'details', 'body', 'warnings', 'events'];

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface WatchEvent {
  type: string;
  object: unknown;
}

export interface Answer {
  code: number;
  body: unknown;
  warnings: string[];
  /** A watch's events, in order. */
  events?: WatchEvent[];
}

/** Earlier answers of the same case on the same server, by label. */
export interface Answers {
  get(label: string): Answer;
  /** `metadata.resourceVersion` of a labelled answer's object (or list). */
  rv(label: string): string;
  /** `metadata.uid` of a labelled answer's object. */
  uid(label: string): string;
}

type Computed<T> = T | ((answers: Answers) => T);

/** A request body: an object or, for a JSON patch, a list of operations. */
export type Body = Record<string, unknown> | unknown[];

export interface Request {
  /** Lets later requests read this answer; names it in a difference. */
  label?: string;
  method: Method;
  path: Computed<string>;
  body?: Computed<Body>;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  as?: Identity;
  /** A watch: its events are read until this many arrived, the stream ended, or `timeoutMs` (default 5 s) passed. */
  watch?: { events: number; timeoutMs?: number };
  /**
   * A setup request sent again until its answer passes (for up to 10 s): kube-apiserver's
   * authorizer reads RBAC objects from a cache, so a new binding takes effect a moment later,
   * and a Deployment's controller writes its status after the create.
   */
  until?: (answer: Answer) => boolean;
}

export interface ConformanceCase {
  name: string;
  /** Requests that set the scene, in the case's namespace; each must succeed on both servers. */
  setup?: (ns: string) => Request[];
  /** The request under test. A watch stays open while `then` runs. */
  request: (ns: string) => Request;
  /** Requests after it whose answers are compared too: the stored object, or the writes a watch sees. */
  then?: (ns: string) => Request[];
  /** What of each compared answer is compared (default all). */
  compare?: readonly Aspect[];
  /** Replacements applied to every message of both answers, for values that legitimately differ. */
  mask?: Array<[RegExp, string]>;
}

export interface KnownDeviation {
  case: string;
  /** The differences it shows, as `<label>.<aspect>` (`request.message`, `then[0].body`). */
  differs: string[];
  reason: string;
}

// ---- fixtures --------------------------------------------------------------------------

export const CASE_LABEL = 'conformance.ome.io/case';

interface KindFixture {
  kind: string;
  apiVersion: string;
  plural: string;
  namespaced: boolean;
  /** A valid object; `labels` are added to the case's own label. */
  object(ns: string, name: string, labels?: Record<string, string>): Record<string, unknown>;
  /** The object's content changed as a replace would change it. */
  change(object: Record<string, unknown>): Record<string, unknown>;
  /** Whether a read object is done changing by itself (its controller has written its status). */
  settled?: (answer: Answer) => boolean;
}

function metadata(ns: string, name: string, namespaced: boolean, labels: Record<string, string> = {}): Record<string, unknown> {
  return { name, ...(namespaced ? { namespace: ns } : {}), labels: { [CASE_LABEL]: ns, ...labels } };
}

function withSpec(object: Record<string, unknown>, spec: Record<string, unknown>): Record<string, unknown> {
  return { ...object, spec: { ...(object.spec as Record<string, unknown>), ...spec } };
}

const OME = 'ome.io/v1beta1';

export const INFERENCE_SERVICE: KindFixture = {
  kind: 'InferenceService',
  apiVersion: OME,
  plural: 'inferenceservices',
  namespaced: true,
  object: (ns, name, labels) => ({ apiVersion: OME, kind: 'InferenceService', metadata: metadata(ns, name, true, labels), spec: { model: { name: 'llama-3-8b' }, runtime: { name: 'sglang' } } }),
  change: (object) => withSpec(object, { runtime: { name: 'sglang', autoSync: false, revision: 'cr-sglang-5d8f0a1b' } }),
};

export const SERVING_RUNTIME: KindFixture = {
  kind: 'ServingRuntime',
  apiVersion: OME,
  plural: 'servingruntimes',
  namespaced: true,
  object: (ns, name, labels) => ({
    apiVersion: OME,
    kind: 'ServingRuntime',
    metadata: metadata(ns, name, true, labels),
    spec: { supportedModelFormats: [{ name: 'safetensors' }], containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4.6', args: ['--port', '8080'] }] },
  }),
  change: (object) => withSpec(object, { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4.7', args: ['--port', '8080'] }] }),
};

export const CLUSTER_SERVING_RUNTIME: KindFixture = {
  kind: 'ClusterServingRuntime',
  apiVersion: OME,
  plural: 'clusterservingruntimes',
  namespaced: false,
  object: (ns, name, labels) => ({
    apiVersion: OME,
    kind: 'ClusterServingRuntime',
    metadata: metadata(ns, name, false, labels),
    spec: { disabled: false, protocolVersions: ['openAI'], containers: [{ name: 'engine', image: 'vllm/vllm-openai:v0.8.5' }] },
  }),
  change: (object) => withSpec(object, { disabled: true }),
};

export const ROLLOUT_POLICY: KindFixture = {
  kind: 'RolloutPolicy',
  apiVersion: OME,
  plural: 'rolloutpolicies',
  namespaced: true,
  object: (ns, name, labels) => ({
    apiVersion: OME,
    kind: 'RolloutPolicy',
    metadata: metadata(ns, name, true, labels),
    spec: { canary: { steps: [{ capacity: 1, traffic: 10, pause: { duration: '5m' } }, { capacity: '50%', traffic: 50 }] } },
  }),
  change: (object) => withSpec(object, { canary: { steps: [{ capacity: 1, traffic: 20 }] } }),
};

export const CONTROLLER_REVISION: KindFixture = {
  kind: 'ControllerRevision',
  apiVersion: 'apps/v1',
  plural: 'controllerrevisions',
  namespaced: true,
  object: (ns, name, labels) => ({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: metadata(ns, name, true, { 'ome.io/runtime': 'sglang', ...labels }),
    revision: 1,
    data: { spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4.6' }] } },
  }),
  change: (object) => ({ ...object, metadata: { ...(object.metadata as Record<string, unknown>), annotations: { 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' } } }),
};

export const DEPLOYMENT: KindFixture = {
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  plural: 'deployments',
  namespaced: true,
  // No replicas: the controller (kube-controller-manager's, or the embedded server's
  // simulation) writes the status once or twice and then leaves the object alone.
  object: (ns, name, labels) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(ns, name, true, labels),
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4.6', ports: [{ containerPort: 8080 }], env: [{ name: 'MODEL', value: 'llama' }] }] },
      },
    },
  }),
  change: (object) => withSpec(object, { replicas: 2 }),
  settled: (answer) => {
    const object = answer.body as { metadata?: { generation?: number }; status?: { observedGeneration?: number; conditions?: Array<{ type: string; reason?: string }> } };
    const progressed = object.status?.conditions?.some((condition) => condition.type === 'Progressing' && condition.reason === 'NewReplicaSetAvailable');
    return object.status?.observedGeneration === object.metadata?.generation && progressed === true;
  },
};

export const KINDS: readonly KindFixture[] = [INFERENCE_SERVICE, SERVING_RUNTIME, CLUSTER_SERVING_RUNTIME, ROLLOUT_POLICY, CONTROLLER_REVISION, DEPLOYMENT];

function groupPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export function collectionPath(kind: KindFixture, ns: string | undefined): string {
  return kind.namespaced && ns !== undefined ? `${groupPath(kind.apiVersion)}/namespaces/${ns}/${kind.plural}` : `${groupPath(kind.apiVersion)}/${kind.plural}`;
}

export function itemPath(kind: KindFixture, ns: string, name: string, subresource = ''): string {
  return `${collectionPath(kind, ns)}/${name}${subresource ? `/${subresource}` : ''}`;
}

/** A cluster-scoped object's name is the case's namespace plus a suffix, so cases never share one. */
function nameIn(kind: KindFixture, ns: string, name: string): string {
  return kind.namespaced ? name : `${ns}-${name}`;
}

// ---- request builders ------------------------------------------------------------------

const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

function create(kind: KindFixture, ns: string, name: string, labels?: Record<string, string>, label?: string): Request {
  return { ...(label ? { label } : {}), method: 'POST', path: collectionPath(kind, ns), body: kind.object(ns, nameIn(kind, ns, name), labels) };
}

/** A create whose object the next request writes at its resourceVersion (`label`): first read until its controller is done with it. */
function createSettled(kind: KindFixture, ns: string, name: string, label: string): Request[] {
  const settled = kind.settled;
  if (!settled) return [create(kind, ns, name, {}, label)];
  return [create(kind, ns, name), { ...read(kind, ns, name), label, until: settled }];
}

function read(kind: KindFixture, ns: string, name: string, subresource = ''): Request {
  return { method: 'GET', path: itemPath(kind, ns, nameIn(kind, ns, name), subresource) };
}

function patch(kind: KindFixture, ns: string, name: string, contentType: string, body: Computed<Body>, options: { subresource?: string; query?: string; as?: Identity; label?: string } = {}): Request {
  const path = `${itemPath(kind, ns, nameIn(kind, ns, name), options.subresource)}${options.query ? `?${options.query}` : ''}`;
  return { ...(options.label ? { label: options.label } : {}), method: 'PATCH', path, contentType, body, ...(options.as ? { as: options.as } : {}) };
}

function replace(kind: KindFixture, ns: string, name: string, body: Computed<Body>, options: { subresource?: string; query?: string; label?: string } = {}): Request {
  const path = `${itemPath(kind, ns, nameIn(kind, ns, name), options.subresource)}${options.query ? `?${options.query}` : ''}`;
  return { ...(options.label ? { label: options.label } : {}), method: 'PUT', path, body };
}

function remove(kind: KindFixture, ns: string, name: string, body?: Computed<Body>): Request {
  return { method: 'DELETE', path: itemPath(kind, ns, nameIn(kind, ns, name)), ...(body === undefined ? {} : { body }) };
}

function watch(path: Computed<string>, events: number, timeoutMs?: number): Request {
  return { method: 'GET', path, watch: { events, ...(timeoutMs === undefined ? {} : { timeoutMs }) } };
}

/** The object as created, with `resourceVersion` from a labelled answer and a change applied. */
function atVersion(object: Record<string, unknown>, label: string, change: (o: Record<string, unknown>) => Record<string, unknown> = (o) => o): (answers: Answers) => Body {
  return (answers) => {
    const changed = change(object);
    return { ...changed, metadata: { ...(changed.metadata as Record<string, unknown>), resourceVersion: answers.rv(label) } };
  };
}

// ---- the table -------------------------------------------------------------------------

/** Create, get, list, replace and delete, and their AlreadyExists, NotFound and Conflict answers, for one kind. */
function crudCases(kind: KindFixture): ConformanceCase[] {
  const k = kind.kind;
  return [
    { name: `${k}: create, then get`, request: (ns) => create(kind, ns, 'alpha'), then: (ns) => [read(kind, ns, 'alpha')] },
    { name: `${k}: create an existing name is AlreadyExists`, setup: (ns) => [create(kind, ns, 'alpha')], request: (ns) => create(kind, ns, 'alpha') },
    { name: `${k}: get a missing name is NotFound`, request: (ns) => read(kind, ns, 'missing') },
    {
      name: `${k}: list with a labelSelector`,
      setup: (ns) => [create(kind, ns, 'gold', { tier: 'gold' }), create(kind, ns, 'silver', { tier: 'silver' })],
      request: (ns) => ({ method: 'GET', path: `${collectionPath(kind, ns)}?labelSelector=${encodeURIComponent(`${CASE_LABEL}=${ns},tier=gold`)}` }),
    },
    {
      name: `${k}: replace (PUT) at the current resourceVersion`,
      setup: (ns) => createSettled(kind, ns, 'alpha', 'created'),
      request: (ns) => replace(kind, ns, 'alpha', atVersion(kind.object(ns, nameIn(kind, ns, 'alpha')), 'created', kind.change)),
      then: (ns) => [read(kind, ns, 'alpha')],
    },
    {
      name: `${k}: replace (PUT) at a stale resourceVersion is Conflict`,
      setup: (ns) => [...createSettled(kind, ns, 'alpha', 'created'), replace(kind, ns, 'alpha', atVersion(kind.object(ns, nameIn(kind, ns, 'alpha')), 'created', kind.change))],
      request: (ns) => replace(kind, ns, 'alpha', atVersion(kind.object(ns, nameIn(kind, ns, 'alpha')), 'created')),
    },
    { name: `${k}: delete, then get`, setup: (ns) => [create(kind, ns, 'alpha')], request: (ns) => remove(kind, ns, 'alpha'), then: (ns) => [read(kind, ns, 'alpha')] },
    { name: `${k}: delete a missing name is NotFound`, request: (ns) => remove(kind, ns, 'missing') },
  ];
}

const ISVC = INFERENCE_SERVICE;
const CR = CONTROLLER_REVISION;

/** A status the plane writes on an InferenceService. */
const ISVC_STATUS = {
  observedGeneration: 1,
  pinnedRevisionName: 'sglang-5d8f',
  conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Pinned', message: 'pinned to sglang-5d8f' }],
};

const conflictCases: ConformanceCase[] = [
  {
    name: 'InferenceService: merge patch with a stale metadata.resourceVersion is Conflict',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { touched: 'yes' } } })],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, (a) => ({ metadata: { resourceVersion: a.rv('created'), annotations: { touched: 'again' } } })),
  },
  {
    name: 'InferenceService: JSON patch whose resourceVersion test fails is Invalid',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { touched: 'yes' } } })],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, (a) => [
      { op: 'test', path: '/metadata/resourceVersion', value: a.rv('created') },
      { op: 'replace', path: '/spec/runtime/name', value: 'vllm' },
    ]),
  },
  {
    name: 'InferenceService: JSON patch setting a stale metadata.resourceVersion is Conflict',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { touched: 'yes' } } })],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, (a) => [
      { op: 'replace', path: '/metadata/resourceVersion', value: a.rv('created') },
      { op: 'replace', path: '/spec/runtime/name', value: 'vllm' },
    ]),
  },
  {
    name: 'InferenceService: JSON patch whose resourceVersion test passes',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created')],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, (a) => [
      { op: 'test', path: '/metadata/resourceVersion', value: a.rv('created') },
      { op: 'add', path: '/metadata/annotations', value: { 'ome.io/sync-wave': '2' } },
    ]),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: replace (PUT) without a resourceVersion is Invalid',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => replace(ISVC, ns, 'alpha', ISVC.change(ISVC.object(ns, 'alpha'))),
  },
  {
    name: 'InferenceService: status replace at a stale resourceVersion is Conflict',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status' })],
    request: (ns) => replace(ISVC, ns, 'alpha', atVersion(ISVC.object(ns, 'alpha'), 'created', (o) => ({ ...o, status: { url: 'http://alpha' } })), { subresource: 'status' }),
  },
  {
    name: 'InferenceService: status merge patch with a stale resourceVersion is Conflict',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status' })],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, (a) => ({ metadata: { resourceVersion: a.rv('created') }, status: { url: 'http://alpha' } }), { subresource: 'status' }),
  },
  {
    name: 'ControllerRevision: merge patch at the listed resourceVersion (the GC mark)',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f', {}, 'created')],
    request: (ns) => patch(CR, ns, 'sglang-5d8f', MERGE, (a) => ({ metadata: { resourceVersion: a.rv('created'), annotations: { 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' } } })),
    then: (ns) => [read(CR, ns, 'sglang-5d8f')],
  },
  {
    name: 'ControllerRevision: merge patch at a stale resourceVersion is Conflict',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f', {}, 'created'), patch(CR, ns, 'sglang-5d8f', MERGE, { metadata: { labels: { touched: 'yes' } } })],
    request: (ns) => patch(CR, ns, 'sglang-5d8f', MERGE, (a) => ({ metadata: { resourceVersion: a.rv('created'), annotations: { 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' } } })),
  },
  {
    name: 'ControllerRevision: delete with a stale resourceVersion precondition is Conflict',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f', {}, 'created'), patch(CR, ns, 'sglang-5d8f', MERGE, { metadata: { labels: { touched: 'yes' } } })],
    request: (ns) => remove(CR, ns, 'sglang-5d8f', (a) => ({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: a.uid('created'), resourceVersion: a.rv('created') } })),
    mask: [[/\(\d+\)/g, '(<rv>)']],
  },
  {
    name: 'ControllerRevision: delete with another uid precondition is Conflict',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f')],
    request: (ns) => remove(CR, ns, 'sglang-5d8f', { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '00000000-0000-4000-8000-000000000000' } }),
  },
  {
    name: 'ControllerRevision: delete with matching preconditions (the GC sweep)',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f', {}, 'created')],
    request: (ns) => remove(CR, ns, 'sglang-5d8f', (a) => ({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: a.uid('created'), resourceVersion: a.rv('created') } })),
  },
  {
    name: 'InferenceService: delete of an object with a finalizer marks it, then removing the finalizer removes it',
    setup: (ns) => [{ method: 'POST', path: collectionPath(ISVC, ns), body: { ...ISVC.object(ns, 'alpha'), metadata: { name: 'alpha', finalizers: ['ome.io/pinning'] } } }],
    request: (ns) => remove(ISVC, ns, 'alpha'),
    then: (ns) => [patch(ISVC, ns, 'alpha', MERGE, { metadata: { finalizers: null } }), read(ISVC, ns, 'alpha')],
  },
  {
    name: 'ControllerRevision: a dry-run delete',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f')],
    request: (ns) => ({ method: 'DELETE', path: `${itemPath(CR, ns, 'sglang-5d8f')}?dryRun=All` }),
    then: (ns) => [read(CR, ns, 'sglang-5d8f')],
  },
  {
    name: 'Deployment: replace (PUT) without a resourceVersion is allowed',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine')],
    request: (ns) => replace(DEPLOYMENT, ns, 'engine', DEPLOYMENT.change(DEPLOYMENT.object(ns, 'engine'))),
  },
  {
    name: 'Deployment: strategic merge patch with a stale resourceVersion is Conflict',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine', {}, 'created'), patch(DEPLOYMENT, ns, 'engine', MERGE, { spec: { replicas: 2 } })],
    request: (ns) => patch(DEPLOYMENT, ns, 'engine', STRATEGIC, (a) => ({ metadata: { resourceVersion: a.rv('created') }, spec: { replicas: 3 } })),
  },
];

const statusCases: ConformanceCase[] = [
  {
    name: 'InferenceService: status replace changes only status',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created')],
    request: (ns) => replace(ISVC, ns, 'alpha', atVersion(ISVC.object(ns, 'alpha'), 'created', (o) => ({ ...ISVC.change(o), metadata: { ...(o.metadata as object), labels: { other: 'label' } }, status: ISVC_STATUS })), { subresource: 'status' }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: status merge patch changes only status',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { ignored: 'no' } }, spec: { runtime: { name: 'vllm' } }, status: ISVC_STATUS }, { subresource: 'status' }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: get of the status subresource',
    setup: (ns) => [create(ISVC, ns, 'alpha'), patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status' })],
    request: (ns) => read(ISVC, ns, 'alpha', 'status'),
  },
  {
    name: 'InferenceService: replace (PUT) of the main resource ignores status',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created'), patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status', label: 'status' })],
    request: (ns) => replace(ISVC, ns, 'alpha', atVersion(ISVC.object(ns, 'alpha'), 'status', (o) => ({ ...ISVC.change(o), status: { url: 'http://ignored' } }))),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: merge patch of the main resource ignores status',
    setup: (ns) => [create(ISVC, ns, 'alpha'), patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status' })],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { patched: 'yes' } }, status: { url: 'http://ignored', pinnedRevisionName: null } }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: create drops status',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: { ...ISVC.object(ns, 'alpha'), status: ISVC_STATUS } }),
  },
  {
    name: 'RolloutPolicy: status merge patch with conditions',
    setup: (ns) => [create(ROLLOUT_POLICY, ns, 'canary')],
    request: (ns) => patch(ROLLOUT_POLICY, ns, 'canary', MERGE, { status: { observedGeneration: 1, portableDigest: 'sha256:abc', attachedGroups: 2, conditions: [{ type: 'Ready', status: 'True', reason: 'Valid' }] } }, { subresource: 'status' }),
  },
  {
    name: 'ServingRuntime: status merge patch',
    setup: (ns) => [create(SERVING_RUNTIME, ns, 'sglang')],
    request: (ns) => patch(SERVING_RUNTIME, ns, 'sglang', MERGE, { status: { inheritanceChain: ['base', 'sglang'] } }, { subresource: 'status' }),
  },
  {
    name: 'ClusterServingRuntime: status JSON patch',
    setup: (ns) => [create(CLUSTER_SERVING_RUNTIME, ns, 'vllm')],
    request: (ns) => patch(CLUSTER_SERVING_RUNTIME, ns, 'vllm', JSON_PATCH, [{ op: 'add', path: '/status', value: { inheritanceChain: ['vllm'] } }], { subresource: 'status' }),
  },
];

const patchCases: ConformanceCase[] = [
  {
    name: 'InferenceService: merge patch sets and removes labels and annotations',
    setup: (ns) => [create(ISVC, ns, 'alpha', { stale: 'yes' })],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { stale: null, fresh: 'yes' }, annotations: { 'ome.io/runtime-sync': 'token-1' } }, spec: { runtime: { autoSync: false } } }),
  },
  {
    name: 'InferenceService: JSON patch add, replace and remove',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, [
      { op: 'add', path: '/spec/model/fineTunedWeights', value: ['lora-a'] },
      { op: 'replace', path: '/spec/runtime/name', value: 'vllm' },
      { op: 'remove', path: '/metadata/labels' },
    ]),
  },
  {
    name: 'InferenceService: JSON patch removing a missing path is Invalid',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, [{ op: 'remove', path: '/spec/decoder' }]),
  },
  {
    name: 'InferenceService: a JSON patch that is not a list is BadRequest',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', JSON_PATCH, { op: 'add', path: '/spec/x', value: 1 }),
  },
  {
    name: 'InferenceService: strategic merge patch is UnsupportedMediaType',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', STRATEGIC, { metadata: { labels: { x: 'y' } } }),
  },
  {
    name: 'InferenceService: an unknown patch media type is UnsupportedMediaType',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', 'application/x-patch+json', { metadata: { labels: { x: 'y' } } }),
  },
  {
    name: 'Deployment: an unknown patch media type is UnsupportedMediaType',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine')],
    request: (ns) => patch(DEPLOYMENT, ns, 'engine', 'application/x-patch+json', { spec: { replicas: 2 } }),
  },
  {
    name: 'InferenceService: merge patch of a missing name is NotFound',
    request: (ns) => patch(ISVC, ns, 'missing', MERGE, { metadata: { labels: { x: 'y' } } }),
  },
  {
    name: 'Deployment: merge patch of replicas (the rollout step)',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine')],
    request: (ns) => patch(DEPLOYMENT, ns, 'engine', MERGE, { spec: { replicas: 3 } }),
  },
  {
    name: 'Deployment: strategic merge patch merges containers and env by name',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine')],
    request: (ns) => patch(DEPLOYMENT, ns, 'engine', STRATEGIC, {
      metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' } },
      spec: { template: { spec: { containers: [{ name: 'engine', env: [{ name: 'TP', value: '2' }] }, { name: 'sidecar', image: 'busybox:1.36' }] } } },
    }),
  },
  {
    name: 'Deployment: strategic merge patch deletes a container with $patch',
    setup: (ns) => [create(DEPLOYMENT, ns, 'engine'), patch(DEPLOYMENT, ns, 'engine', STRATEGIC, { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1.36' }] } } } })],
    request: (ns) => patch(DEPLOYMENT, ns, 'engine', STRATEGIC, { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } }),
  },
  {
    name: 'InferenceService: server-side apply creates',
    request: (ns) => ({ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.object(ns, 'alpha') }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'InferenceService: server-side apply without a fieldManager is BadRequest',
    request: (ns) => ({ method: 'PATCH', path: itemPath(ISVC, ns, 'alpha'), contentType: APPLY, body: ISVC.object(ns, 'alpha') }),
  },
  {
    name: 'InferenceService: server-side apply by the same manager changes a field',
    setup: (ns) => [{ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.object(ns, 'alpha') }],
    request: (ns) => ({ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.change(ISVC.object(ns, 'alpha')) }),
  },
  {
    name: 'InferenceService: server-side apply removes a field its manager no longer applies',
    setup: (ns) => [{ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.object(ns, 'alpha', { dropped: 'soon' }) }],
    request: (ns) => ({ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.object(ns, 'alpha') }),
  },
  {
    name: "InferenceService: server-side apply of another manager's field is Conflict",
    setup: (ns) => [{ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=kubectl`, contentType: APPLY, body: ISVC.object(ns, 'alpha') }],
    request: (ns) => ({ method: 'PATCH', path: `${itemPath(ISVC, ns, 'alpha')}?fieldManager=other`, contentType: APPLY, body: withSpec(ISVC.object(ns, 'alpha'), { model: { name: 'mistral-7b' } }) }),
  },
  {
    name: 'Deployment: server-side apply creates',
    request: (ns) => ({ method: 'PATCH', path: `${itemPath(DEPLOYMENT, ns, 'engine')}?fieldManager=kubectl`, contentType: APPLY, body: DEPLOYMENT.object(ns, 'engine') }),
  },
];

/** A strict patch's refusal quotes the patched object, whose server-set fields (managedFields, versions) differ. */
const PATCHED_OBJECT: [RegExp, string] = [/Invalid value: "(?:[^"\\]|\\.)*": strict decoding error/g, 'Invalid value: "<patched object>": strict decoding error'];

const pruningCases: ConformanceCase[] = [
  {
    name: 'InferenceService: create prunes undeclared fields below a preserving spec',
    request: (ns) => ({
      method: 'POST',
      path: collectionPath(ISVC, ns),
      body: { ...ISVC.object(ns, 'alpha'), spec: { model: { name: 'llama-3-8b', revision: 'main' }, runtime: { name: 'sglang', pin: true }, custom: { kept: true } } },
    }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'RolloutPolicy: create prunes undeclared spec fields',
    request: (ns) => ({ method: 'POST', path: collectionPath(ROLLOUT_POLICY, ns), body: { ...ROLLOUT_POLICY.object(ns, 'canary'), spec: { canary: { steps: [{ capacity: 1, traffic: 10, weight: 3 }], maxSurge: 1 }, notes: 'x' } } }),
    then: (ns) => [read(ROLLOUT_POLICY, ns, 'canary')],
  },
  {
    name: 'InferenceService: merge patch prunes an undeclared field',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { spec: { runtime: { pinned: 'yes' } } }),
  },
  {
    name: 'InferenceService: status patch prunes undeclared status fields',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { status: { canary: { currentStep: 1, observedTrafficWeight: 10, finished: true }, phase: 'Ready' } }, { subresource: 'status' }),
    then: (ns) => [read(ISVC, ns, 'alpha')],
  },
  {
    name: 'ServingRuntime: status replace prunes undeclared status fields',
    setup: (ns) => [create(SERVING_RUNTIME, ns, 'sglang', {}, 'created')],
    request: (ns) => replace(SERVING_RUNTIME, ns, 'sglang', atVersion(SERVING_RUNTIME.object(ns, 'sglang'), 'created', (o) => ({ ...o, status: { inheritanceChain: ['sglang'], phase: 'Ready' } })), { subresource: 'status' }),
    then: (ns) => [read(SERVING_RUNTIME, ns, 'sglang')],
  },
  {
    name: 'InferenceService: fieldValidation=Strict refuses an undeclared field on create',
    request: (ns) => ({ method: 'POST', path: `${collectionPath(ISVC, ns)}?fieldValidation=Strict`, body: { ...ISVC.object(ns, 'alpha'), spec: { model: { name: 'llama', revision: 'main' }, runtime: { name: 'sglang' } } } }),
  },
  {
    name: 'InferenceService: fieldValidation=Strict refuses undeclared fields on a merge patch',
    setup: (ns) => [create(ISVC, ns, 'alpha')],
    request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { spec: { runtime: { pinned: 'yes' }, model: { revision: 'main' } } }, { query: 'fieldValidation=Strict' }),
    mask: [PATCHED_OBJECT],
  },
  {
    name: 'ServingRuntime: fieldValidation=Strict refuses an undeclared status field',
    setup: (ns) => [create(SERVING_RUNTIME, ns, 'sglang')],
    request: (ns) => patch(SERVING_RUNTIME, ns, 'sglang', MERGE, { status: { phase: 'Ready' } }, { subresource: 'status', query: 'fieldValidation=Strict' }),
    mask: [PATCHED_OBJECT],
  },
  {
    name: 'InferenceService: fieldValidation=Ignore prunes without a warning',
    request: (ns) => ({ method: 'POST', path: `${collectionPath(ISVC, ns)}?fieldValidation=Ignore`, body: { ...ISVC.object(ns, 'alpha'), spec: { model: { name: 'llama', revision: 'main' }, runtime: { name: 'sglang' } } } }),
  },
];

const validationCases: ConformanceCase[] = [
  {
    name: 'InferenceService: an invalid name is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: ISVC.object(ns, 'Llama_3') }),
  },
  {
    name: 'InferenceService: a field of the wrong type is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: { ...ISVC.object(ns, 'alpha'), spec: { model: { name: 'llama-3-8b' }, runtime: { name: 'sglang', autoSync: 'yes' } } } }),
  },
  {
    name: 'InferenceService: a missing required field is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: { ...ISVC.object(ns, 'alpha'), spec: { model: {}, runtime: { name: 'sglang' } } } }),
  },
  {
    name: 'InferenceService: an invalid label value is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: ISVC.object(ns, 'alpha', { tier: 'not valid!' }) }),
  },
  {
    name: 'InferenceService: a namespace in the body other than the URL is BadRequest',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: ISVC.object('elsewhere', 'alpha') }),
  },
  {
    name: 'InferenceService: an apiVersion in the body other than the URL is BadRequest',
    request: (ns) => ({ method: 'POST', path: collectionPath(ISVC, ns), body: { ...ISVC.object(ns, 'alpha'), apiVersion: 'ome.io/v1alpha1' } }),
  },
  {
    name: 'InferenceService: a name in the body other than the URL is BadRequest',
    setup: (ns) => [create(ISVC, ns, 'alpha', {}, 'created')],
    request: (ns) => replace(ISVC, ns, 'alpha', atVersion(ISVC.object(ns, 'beta'), 'created')),
  },
  {
    name: 'RolloutPolicy: a CEL rule that fails is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ROLLOUT_POLICY, ns), body: { ...ROLLOUT_POLICY.object(ns, 'both'), spec: { canary: { steps: [{ capacity: 1, traffic: 10 }] }, rollingUpdate: { maxSurge: 1 } } } }),
  },
  {
    name: 'RolloutPolicy: a value outside its bounds is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(ROLLOUT_POLICY, ns), body: { ...ROLLOUT_POLICY.object(ns, 'canary'), spec: { canary: { steps: [{ capacity: 1, traffic: 150 }] } } } }),
  },
  {
    name: 'RolloutPolicy: a status value outside its enum is Invalid',
    setup: (ns) => [create(ROLLOUT_POLICY, ns, 'canary')],
    request: (ns) => patch(ROLLOUT_POLICY, ns, 'canary', MERGE, { status: { conditions: [{ type: 'Ready', status: 'Maybe' }] } }, { subresource: 'status' }),
  },
  {
    name: 'Deployment: an invalid name is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(DEPLOYMENT, ns), body: DEPLOYMENT.object(ns, 'Engine.') }),
  },
  {
    name: 'Deployment: a selector that does not match the template is Invalid',
    request: (ns) => ({
      method: 'POST',
      path: collectionPath(DEPLOYMENT, ns),
      body: withSpec(DEPLOYMENT.object(ns, 'engine'), { selector: { matchLabels: { app: 'other' } } }),
    }),
  },
  {
    name: 'Deployment: a container without an image is Invalid',
    request: (ns) => ({
      method: 'POST',
      path: collectionPath(DEPLOYMENT, ns),
      body: withSpec(DEPLOYMENT.object(ns, 'engine'), { template: { metadata: { labels: { app: 'engine' } }, spec: { containers: [{ name: 'engine' }] } } }),
    }),
  },
  {
    name: 'ControllerRevision: changing data is Invalid',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f')],
    request: (ns) => patch(CR, ns, 'sglang-5d8f', MERGE, { data: { spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.4.7' }] } } }),
  },
  {
    name: 'ControllerRevision: an unknown patch media type is UnsupportedMediaType',
    setup: (ns) => [create(CR, ns, 'sglang-5d8f')],
    request: (ns) => patch(CR, ns, 'sglang-5d8f', 'application/x-patch+json', { metadata: { labels: { x: 'y' } } }),
  },
  {
    name: 'ControllerRevision: a negative revision is Invalid',
    request: (ns) => ({ method: 'POST', path: collectionPath(CR, ns), body: { ...CR.object(ns, 'sglang-5d8f'), revision: -1 } }),
  },
];

const ISVC_EVENTS_SETUP = (ns: string): Request[] => [{ label: 'listed', method: 'GET', path: collectionPath(ISVC, ns) }];

const watchCases: ConformanceCase[] = [
  {
    name: 'InferenceService: a watch from a list sees ADDED, MODIFIED and DELETED in order',
    setup: ISVC_EVENTS_SETUP,
    request: (ns) => watch((a) => `${collectionPath(ISVC, ns)}?watch=true&resourceVersion=${a.rv('listed')}`, 4),
    then: (ns) => [
      create(ISVC, ns, 'alpha'),
      patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { 'ome.io/runtime-sync': 'token-1' } } }),
      patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status' }),
      remove(ISVC, ns, 'alpha'),
    ],
  },
  {
    name: 'InferenceService: a watch with a labelSelector sees an object leave and return as DELETED and ADDED',
    setup: (ns) => [create(ISVC, ns, 'alpha', { tier: 'gold' }, 'created')],
    request: (ns) => watch((a) => `${collectionPath(ISVC, ns)}?watch=true&labelSelector=tier%3Dgold&resourceVersion=${a.rv('created')}`, 3),
    then: (ns) => [
      patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { tier: 'silver' } } }),
      patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { tier: 'gold' } } }),
      patch(ISVC, ns, 'alpha', MERGE, { metadata: { annotations: { seen: 'yes' } } }),
    ],
  },
  {
    name: 'InferenceService: a watch without a resourceVersion starts with the existing objects',
    setup: (ns) => [create(ISVC, ns, 'alpha'), create(ISVC, ns, 'beta')],
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true`, 3),
    then: (ns) => [patch(ISVC, ns, 'beta', MERGE, { metadata: { labels: { changed: 'yes' } } })],
  },
  {
    name: 'ControllerRevision: a watch from a list sees ADDED, MODIFIED and DELETED in order',
    setup: (ns) => [{ label: 'listed', method: 'GET', path: collectionPath(CR, ns) }],
    request: (ns) => watch((a) => `${collectionPath(CR, ns)}?watch=true&resourceVersion=${a.rv('listed')}`, 3),
    then: (ns) => [create(CR, ns, 'sglang-5d8f'), patch(CR, ns, 'sglang-5d8f', MERGE, { metadata: { annotations: { 'ome.io/gc-eligible-since': '2026-01-01T00:00:00Z' } } }), remove(CR, ns, 'sglang-5d8f')],
  },
  {
    name: 'ClusterServingRuntime: a watch with a labelSelector from a list',
    setup: (ns) => [{ label: 'listed', method: 'GET', path: `${collectionPath(CLUSTER_SERVING_RUNTIME, undefined)}?labelSelector=${encodeURIComponent(`${CASE_LABEL}=${ns}`)}` }],
    request: (ns) => watch((a) => `${collectionPath(CLUSTER_SERVING_RUNTIME, undefined)}?watch=true&labelSelector=${encodeURIComponent(`${CASE_LABEL}=${ns}`)}&resourceVersion=${a.rv('listed')}`, 2),
    then: (ns) => [create(CLUSTER_SERVING_RUNTIME, ns, 'vllm'), remove(CLUSTER_SERVING_RUNTIME, ns, 'vllm')],
  },
  {
    name: 'InferenceService: sendInitialEvents sends the objects, then a BOOKMARK marking their end',
    setup: (ns) => [create(ISVC, ns, 'alpha'), create(ISVC, ns, 'beta')],
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, 3),
  },
  {
    name: 'InferenceService: sendInitialEvents without resourceVersionMatch is Invalid',
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`, 1),
  },
  {
    name: 'InferenceService: a watch with resourceVersionMatch and no sendInitialEvents is Invalid',
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&resourceVersionMatch=NotOlderThan`, 1),
  },
  {
    name: 'InferenceService: a watch from before the kind was served is Expired (410)',
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&resourceVersion=1`, 1),
    mask: [[/\d+/g, 'N']],
  },
  {
    name: 'InferenceService: a watch from the version a 410 names is served; from the one before it, Expired',
    setup: (ns) => [{ ...watch(`${collectionPath(ISVC, ns)}?watch=true&resourceVersion=1`, 1), label: 'expired' }],
    request: (ns) => watch((a) => `${collectionPath(ISVC, ns)}?watch=true&timeoutSeconds=1&resourceVersion=${expiredVersion(a) - 1}`, 1),
    then: (ns) => [watch((a) => `${collectionPath(ISVC, ns)}?watch=true&timeoutSeconds=1&resourceVersion=${expiredVersion(a)}`, 1, 3000)],
    mask: [[/\d+/g, 'N']],
  },
  {
    name: 'InferenceService: a watch allowing bookmarks gets one within 6 s',
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&allowWatchBookmarks=true`, 1, 6000),
  },
  {
    name: 'InferenceService: a watch with timeoutSeconds ends',
    request: (ns) => watch(`${collectionPath(ISVC, ns)}?watch=true&timeoutSeconds=1`, 1, 4000),
  },
  {
    name: 'InferenceService: a list at an exact old resourceVersion shows the objects as they were',
    setup: (ns) => [create(ISVC, ns, 'alpha'), { label: 'listed', method: 'GET', path: collectionPath(ISVC, ns) }, patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { later: 'yes' } } }), create(ISVC, ns, 'beta')],
    request: (ns) => ({ method: 'GET', path: (a) => `${collectionPath(ISVC, ns)}?resourceVersion=${a.rv('listed')}&resourceVersionMatch=Exact` }),
  },
  {
    name: 'InferenceService: a list with resourceVersionMatch and no resourceVersion is Invalid',
    request: (ns) => ({ method: 'GET', path: `${collectionPath(ISVC, ns)}?resourceVersionMatch=Exact` }),
  },
];

/** The version an `Expired` watch answer names: `too old resource version: 1 (<version>)`. */
function expiredVersion(answers: Answers): number {
  const event = answers.get('expired').events?.[0];
  const message = (event?.object as { message?: string } | undefined)?.message ?? '';
  const named = /\((\d+)\)/.exec(message)?.[1];
  if (named === undefined) throw new Error(`no Expired event to read a version from: ${message}`);
  return Number(named);
}

const CSR = CLUSTER_SERVING_RUNTIME;

/** Forbidden answers to a ServiceAccount without a binding, namespaced and cluster-scoped. */
const rbacCases: ConformanceCase[] = [
  { name: 'RBAC: get of an InferenceService is Forbidden', request: (ns) => ({ ...read(ISVC, ns, 'alpha'), as: 'nobody' }) },
  { name: 'RBAC: list of InferenceServices in a namespace is Forbidden', request: (ns) => ({ method: 'GET', path: collectionPath(ISVC, ns), as: 'nobody' }) },
  { name: 'RBAC: list of InferenceServices in all namespaces is Forbidden', request: () => ({ method: 'GET', path: collectionPath(ISVC, undefined), as: 'nobody' }) },
  { name: 'RBAC: watch of InferenceServices is Forbidden', request: (ns) => ({ ...watch(`${collectionPath(ISVC, ns)}?watch=true`, 1), as: 'nobody' }) },
  { name: 'RBAC: create of an InferenceService is Forbidden', request: (ns) => ({ ...create(ISVC, ns, 'alpha'), as: 'nobody' }) },
  { name: 'RBAC: patch of an InferenceService is Forbidden', setup: (ns) => [create(ISVC, ns, 'alpha')], request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { metadata: { labels: { x: 'y' } } }, { as: 'nobody' }) },
  { name: 'RBAC: status patch of an InferenceService is Forbidden', setup: (ns) => [create(ISVC, ns, 'alpha')], request: (ns) => patch(ISVC, ns, 'alpha', MERGE, { status: ISVC_STATUS }, { subresource: 'status', as: 'nobody' }) },
  { name: 'RBAC: delete of an InferenceService is Forbidden', setup: (ns) => [create(ISVC, ns, 'alpha')], request: (ns) => ({ ...remove(ISVC, ns, 'alpha'), as: 'nobody' }) },
  { name: 'RBAC: get of a ClusterServingRuntime is Forbidden', request: (ns) => ({ ...read(CSR, ns, 'vllm'), as: 'nobody' }) },
  { name: 'RBAC: list of ClusterServingRuntimes is Forbidden', request: () => ({ method: 'GET', path: collectionPath(CSR, undefined), as: 'nobody' }) },
  { name: 'RBAC: create of a ClusterServingRuntime is Forbidden', request: (ns) => ({ ...create(CSR, ns, 'vllm'), as: 'nobody' }) },
  { name: 'RBAC: patch of a ClusterServingRuntime is Forbidden', setup: (ns) => [create(CSR, ns, 'vllm')], request: (ns) => patch(CSR, ns, 'vllm', MERGE, { spec: { disabled: true } }, { as: 'nobody' }) },
  { name: 'RBAC: delete of a ClusterServingRuntime is Forbidden', setup: (ns) => [create(CSR, ns, 'vllm')], request: (ns) => ({ ...remove(CSR, ns, 'vllm'), as: 'nobody' }) },
  { name: 'RBAC: create of a ControllerRevision is Forbidden', request: (ns) => ({ ...create(CR, ns, 'sglang-5d8f'), as: 'nobody' }) },
  { name: 'RBAC: patch of a Deployment is Forbidden', setup: (ns) => [create(DEPLOYMENT, ns, 'engine')], request: (ns) => patch(DEPLOYMENT, ns, 'engine', STRATEGIC, { spec: { replicas: 2 } }, { as: 'nobody' }) },
  {
    name: 'RBAC: a Role granting get allows get in its namespace',
    setup: (ns) => readerGrant(ns),
    request: (ns) => ({ ...read(ISVC, ns, 'alpha'), as: 'reader' }),
  },
  {
    name: 'RBAC: a Role granting get does not allow list',
    setup: (ns) => readerGrant(ns),
    request: (ns) => ({ method: 'GET', path: collectionPath(ISVC, ns), as: 'reader' }),
  },
  {
    name: 'RBAC: a Role granting get does not reach another namespace',
    setup: (ns) => readerGrant(ns),
    request: () => ({ ...read(ISVC, 'default', 'alpha'), as: 'reader' }),
  },
];

/** A Role letting `reader` get InferenceServices in the case's namespace, and one to get. */
function readerGrant(ns: string): Request[] {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  return [
    create(ISVC, ns, 'alpha'),
    { method: 'POST', path: `${rbac}/namespaces/${ns}/roles`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'isvc-reader' }, rules: [{ apiGroups: ['ome.io'], resources: ['inferenceservices'], verbs: ['get'] }] } },
    {
      method: 'POST',
      path: `${rbac}/namespaces/${ns}/rolebindings`,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'isvc-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'isvc-reader' },
        subjects: [{ kind: 'ServiceAccount', name: SUITE_ACCOUNTS.reader, namespace: 'ome' }],
      },
    },
    { ...read(ISVC, ns, 'alpha'), as: 'reader', until: (answer) => answer.code === 200 },
  ];
}

export const CASES: readonly ConformanceCase[] = [
  ...KINDS.flatMap(crudCases),
  ...conflictCases,
  ...statusCases,
  ...patchCases,
  ...pruningCases,
  ...validationCases,
  ...watchCases,
  ...rbacCases,
];

/** The differences the embedded server keeps, with why. The suite holds this list exact. */
export const KNOWN_DEVIATIONS: readonly KnownDeviation[] = [
  {
    case: 'InferenceService: server-side apply removes a field its manager no longer applies',
    differs: ['request.body'],
    reason: 'The embedded server tracks no field managers: apply merges the configuration over the object, so a field a manager stops applying stays. Neither the plane nor `kubectl ome` applies server-side.',
  },
  {
    case: "InferenceService: server-side apply of another manager's field is Conflict",
    differs: ['request.code', 'request.reason', 'request.message', 'request.details', 'request.body'],
    reason: 'Without field managers there is no ownership to conflict over: the embedded server applies the change (200) where kube-apiserver refuses it (409, `Apply failed with 1 conflict`).',
  },
  {
    case: 'InferenceService: an apiVersion in the body other than the URL is BadRequest',
    differs: ['request.warnings'],
    reason: "Same 400 and message; kube-apiserver's decoder also warns `unknown field \"spec\"`, having no schema for the unserved version. The embedded server refuses the version before decoding.",
  },
  {
    case: 'InferenceService: a watch allowing bookmarks gets one within 6 s',
    differs: ['request.events'],
    reason: 'The embedded server sends a BOOKMARK every `bookmarkIntervalMs` (5 s), kube-apiserver about once a minute, so tests see one soon. Clients that need one at once ask for `sendInitialEvents`, which both answer alike.',
  },
];
