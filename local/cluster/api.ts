/**
 * The API machinery shared by the HTTP server and the in-process client: get, list,
 * create, update, patch, delete and watch with the real server's semantics —
 * resourceVersion preconditions, the status subresource, generation, generateName,
 * structural schemas, admission webhooks, dry runs, finalizers, namespace and CRD
 * cleanup, owner-reference garbage collection and fault injection.
 */
import { randomUUID } from 'node:crypto';
import { currentRequestUser } from './access';
import { WebhookAdmission, type AdmissionAttributes } from './admission';
import { PolicyAdmission, policyErrors } from './admission-policy';
import {
  ApiError,
  alreadyExists,
  badRequest,
  invalidNameParameter,
  conflict,
  expired,
  fieldError,
  forbidden,
  invalid,
  notFound,
  pathNotFound,
  unsupportedMediaType,
  type FieldError,
} from './api-errors';
import { builtinResources } from './builtins';
import { defaultCrd, establishedStatus, resourcesFromCrd, validateCrd } from './crds';
import { FaultInjector } from './faults';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch';
import { ResourceRegistry, groupVersion, storageKey, type KubeObject, type ResourceDef } from './registry';
import { applyStructuralSchema, validationErrors, type SchemaOutcome } from './schema';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldSelector, type LabelSelector } from './selectors';
import { ObjectStore } from './store';
import { pathSegmentProblems, validateControllerRevision, validateDeployment, validateMetaUpdate, validateObjectMeta, type NameRule } from './validation';
import { WatchHub, asServed, type WatchHandle, type WatchSink } from './watch';
import { DeploymentSimulator } from './workloads';
import { defaultPodTemplate } from './pod-defaults';
import { MASTERS_GROUP, type UserInfo } from './rbac';

/** Who the server's own and in-process requests run as (the real server's loopback user). */
const SERVER_USER: UserInfo = { username: 'system:apiserver', groups: [MASTERS_GROUP] };

export interface ClusterApiOptions {
  watchWindow: number;
  bookmarkIntervalMs: number;
  workloadReadyDelayMs: number;
  /**
   * What a write holding a field its structural schema does not declare meets: `prune`
   * (default; a real API server's behaviour, with a warning) or `refuse`, as
   * `fieldValidation=Strict` would for every write, the server's own channel included.
   */
  unknownFields?: 'prune' | 'refuse';
}

/** One write whose object lost fields to pruning: what a real API server would have dropped silently. */
export interface PruneRecord {
  kind: string;
  namespace?: string;
  name: string;
  /** `status` for a write to the status subresource, else empty. */
  subresource: string;
  /** Dropped fields, e.g. `status.canary.finished`. */
  fields: string[];
}

/** How many prune records are kept (oldest dropped first). */
const PRUNE_LOG_SIZE = 1000;

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  /** A write the server makes itself (controllers): no faults, no admission. */
  internal?: boolean;
  /** Who writes, for admission policies; default the HTTP request's user, else the server itself. */
  user?: UserInfo;
}

export interface DeleteParams extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

export interface WriteResult {
  object: KubeObject;
  warnings: string[];
  /** 201 for a create, else 200. */
  code: number;
  /** A delete that removed the object (or would have, in a dry run): kube-apiserver then answers a Success Status, not the object. */
  removed?: boolean;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** How a write's body arrived: a new object, a whole replacement, or a patch of the stored one. */
type WriteMode = 'create' | 'update' | 'patch';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

/** The patch types a custom resource takes, as kube-apiserver lists them when refusing another. */
export const CUSTOM_RESOURCE_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

export interface ListParams {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  /** `Exact` lists the objects as they were at `resourceVersion`; otherwise the list is current. */
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchParams {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

const PROTECTED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Draws of a generated name before a create fails AlreadyExists (kube-apiserver's RetryGenerateName). */
const GENERATE_NAME_ATTEMPTS = 8;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function timestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Structural equality, ignoring key order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** How a kind's names are validated: namespaces are DNS labels, RBAC objects path segments, the rest DNS subdomains. */
function nameRuleOf(def: ResourceDef): NameRule {
  if (def.group === '' && def.plural === 'namespaces') return 'label';
  if (def.group === 'rbac.authorization.k8s.io') return 'path';
  return 'subdomain';
}

function without(object: KubeObject, keys: string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...object };
  for (const key of keys) delete copy[key];
  return copy;
}

function sameIgnoringVersion(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined } });
  return deepEqual(strip(a), strip(b));
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') throw new Error('bad token');
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest(`continue key is not valid: illegal base64 data at input byte 0`);
  }
}

export class ClusterApi {
  readonly registry = new ResourceRegistry();
  readonly store: ObjectStore;
  readonly watches: WatchHub;
  readonly faults: FaultInjector;
  private readonly admission: WebhookAdmission;
  private readonly policies: PolicyAdmission;
  private readonly workloads: DeploymentSimulator;
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly pruneLog: PruneRecord[] = [];
  private readonly unknownFields: 'prune' | 'refuse';
  private stopped = false;

  constructor(options: ClusterApiOptions) {
    this.unknownFields = options.unknownFields ?? 'prune';
    this.store = new ObjectStore(options.watchWindow);
    this.watches = new WatchHub(this.store, options.bookmarkIntervalMs);
    this.faults = new FaultInjector(() => this.watches.closeAll());
    for (const def of builtinResources()) this.registry.add(def);
    this.admission = new WebhookAdmission({
      configurations: () => this.store.list('admissionregistration.k8s.io/validatingwebhookconfigurations').map(([, o]) => o),
      namespaceLabels: (name) => this.store.get('/namespaces', undefined, name)?.metadata.labels,
    });
    this.policies = new PolicyAdmission({
      policies: () => this.store.list('admissionregistration.k8s.io/validatingadmissionpolicies').map(([, o]) => o),
      bindings: () => this.store.list('admissionregistration.k8s.io/validatingadmissionpolicybindings').map(([, o]) => o),
      namespaceLabels: (name) => this.store.get('/namespaces', undefined, name)?.metadata.labels,
    });
    this.workloads = new DeploymentSimulator(this, options.workloadReadyDelayMs);
  }

  /** Validating admission: policies first, then webhooks (kube-apiserver's plugin order). */
  private async admit(attrs: AdmissionAttributes, options: WriteOptions): Promise<string[]> {
    const warnings = this.policies.validate(attrs, options.user ?? currentRequestUser() ?? SERVER_USER);
    return [...warnings, ...(await this.admission.validate(attrs))];
  }

  /** The definition served at group/version/plural; 404 when nothing is served there. */
  resolve(group: string, version: string, plural: string): ResourceDef {
    const def = this.registry.lookup(group, version, plural);
    if (!def) throw pathNotFound();
    return def;
  }

  builtin(plural: string): ResourceDef {
    const def = this.registry.all().find((d) => d.plural === plural && d.crdName === undefined);
    if (!def) throw pathNotFound();
    return def;
  }

  stop(): void {
    this.stopped = true;
    this.watches.closeAll();
    this.workloads.stop();
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }

  /** Runs `task` soon, unless the server stops first; used for controller-like work. */
  later(task: () => Promise<void> | void, delayMs = 0): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      if (this.stopped) return;
      Promise.resolve()
        .then(task)
        .catch(() => undefined);
    }, delayMs);
    this.pending.add(timer);
  }

  supportedFields(def: ResourceDef): string[] {
    return ['metadata.name', 'metadata.namespace', ...Object.keys(def.extraFields ?? {})];
  }

  fieldValue(def: ResourceDef, object: KubeObject, field: string): string {
    if (field === 'metadata.name') return object.metadata.name ?? '';
    if (field === 'metadata.namespace') return object.metadata.namespace ?? '';
    return def.extraFields?.[field]?.(object) ?? '';
  }

  private async checkFault(verb: string, def: ResourceDef, namespace: string | undefined, name: string | undefined, subresource = '', internal = false): Promise<void> {
    if (internal) return;
    const fault = await this.faults.take({ verb, def, subresource, namespace, name });
    if (fault) throw fault;
  }

  private scopeOf(def: ResourceDef, namespace: string | undefined): string | undefined {
    if (!def.namespaced) return undefined;
    if (namespace === undefined || namespace === '') throw badRequest('the server could not find the requested resource');
    return namespace;
  }

  /** The scope of a request naming one object, refusing a name no storage key may hold. */
  private objectScope(def: ResourceDef, namespace: string | undefined, name: string): string | undefined {
    const ns = this.scopeOf(def, namespace);
    const problems = pathSegmentProblems(name);
    if (problems.length > 0) throw invalidNameParameter(name, problems);
    return ns;
  }

  // ---- reads ---------------------------------------------------------------------------

  async get(def: ResourceDef, namespace: string | undefined, name: string, subresource = ''): Promise<KubeObject> {
    const ns = this.objectScope(def, namespace, name);
    await this.checkFault('get', def, ns, name, subresource);
    const object = this.store.get(storageKey(def), ns, name);
    if (!object) throw notFound(def, name);
    return asServed(def, object);
  }

  async list(def: ResourceDef, params: ListParams = {}): Promise<ListResult> {
    await this.checkFault('list', def, params.namespace, undefined);
    const labels = parseLabelSelector(params.labelSelector);
    const fields = parseFieldSelector(params.fieldSelector, this.supportedFields(def));
    const namespace = def.namespaced && params.namespace ? params.namespace : undefined;
    if (params.resourceVersionMatch === 'Exact') return this.listAt(def, params, labels, fields, namespace);
    const token = params.continue ? decodeContinue(params.continue) : undefined;
    const rv = token?.rv ?? this.store.resourceVersion;
    const limit = params.limit !== undefined && params.limit > 0 ? params.limit : undefined;
    const items: KubeObject[] = [];
    let lastKey: string | undefined;
    let more = false;
    for (const [key, object] of this.store.scan(storageKey(def), namespace, token?.start)) {
      if (!matchesLabels(labels, object.metadata.labels)) continue;
      if (!matchesFields(fields, (f) => this.fieldValue(def, object, f))) continue;
      if (limit !== undefined && items.length >= limit) {
        more = true;
        break;
      }
      items.push(object);
      lastKey = key;
    }
    const result: ListResult = { items, resourceVersion: String(rv) };
    if (more && lastKey !== undefined) {
      result.continue = encodeContinue({ rv, start: lastKey });
      // Like the real server, the count is given only when no selector filters the rest.
      if (labels.length === 0 && fields.length === 0) {
        result.remainingItemCount = this.store.countRange(storageKey(def), namespace, lastKey);
      }
    }
    return result;
  }

  /** A list at an exact resourceVersion, rebuilt from the watch history (etcd's compaction is its window). */
  private listAt(def: ResourceDef, params: ListParams, labels: LabelSelector, fields: FieldSelector, namespace: string | undefined): ListResult {
    const at = Number(params.resourceVersion);
    if (!Number.isInteger(at) || at < 0) throw badRequest(`resourceVersion: Invalid value: "${params.resourceVersion ?? ''}": strconv.ParseUint: parsing "${params.resourceVersion ?? ''}": invalid syntax`);
    const objects = this.store.snapshot(storageKey(def), at, namespace);
    if (objects === 'expired') throw expired('The resourceVersion for the provided list is too old.');
    const items = objects
      .map(([, object]) => object)
      .filter((object) => matchesLabels(labels, object.metadata.labels) && matchesFields(fields, (f) => this.fieldValue(def, object, f)));
    return { items: params.limit ? items.slice(0, params.limit) : items, resourceVersion: String(at) };
  }

  /** The list body a client receives: built-in items carry no apiVersion/kind, custom resources do. */
  listObject(def: ResourceDef, result: ListResult): Record<string, unknown> {
    const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
    if (result.continue) metadata.continue = result.continue;
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
    const items = def.crdName === undefined
      ? result.items.map((o) => without(o, ['apiVersion', 'kind']))
      : result.items.map((o) => asServed(def, o));
    // Custom resources are listed as unstructured lists, whose metadata always carries `continue`.
    if (def.crdName !== undefined && metadata.continue === undefined) metadata.continue = '';
    return { apiVersion: groupVersion(def), kind: def.listKind, metadata, items };
  }

  async watch(def: ResourceDef, params: WatchParams, sink: WatchSink): Promise<WatchHandle> {
    await this.checkFault('watch', def, params.namespace, undefined);
    const request = {
      def,
      labelSelector: parseLabelSelector(params.labelSelector),
      fieldSelector: parseFieldSelector(params.fieldSelector, this.supportedFields(def)),
      fieldValue: (object: KubeObject, field: string) => this.fieldValue(def, object, field),
      ...(def.namespaced && params.namespace ? { namespace: params.namespace } : {}),
      ...(params.resourceVersion !== undefined ? { resourceVersion: params.resourceVersion } : {}),
      ...(params.allowWatchBookmarks ? { allowWatchBookmarks: true } : {}),
      ...(params.sendInitialEvents ? { sendInitialEvents: true } : {}),
      ...(params.timeoutSeconds !== undefined ? { timeoutSeconds: params.timeoutSeconds } : {}),
    };
    return this.watches.start(request, sink);
  }

  // ---- decoding and preparation --------------------------------------------------------

  private decode(def: ResourceDef, body: unknown): KubeObject {
    if (!isObject(body)) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    const copy = structuredClone(body) as KubeObject;
    const expected = groupVersion(def);
    if (copy.apiVersion !== undefined && copy.apiVersion !== expected) {
      throw badRequest(`the API version in the data (${String(copy.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (copy.kind !== undefined && copy.kind !== def.kind) {
      throw badRequest(`the kind in the data (${String(copy.kind)}) does not match the expected kind (${def.kind})`);
    }
    if (copy.metadata !== undefined && !isObject(copy.metadata)) throw badRequest('metadata must be an object');
    copy.apiVersion = expected;
    copy.kind = def.kind;
    copy.metadata = { ...(copy.metadata ?? {}) };
    return copy;
  }

  private checkNamespaceOf(def: ResourceDef, object: KubeObject, namespace: string | undefined): void {
    if (!def.namespaced) {
      delete object.metadata.namespace;
      return;
    }
    const inBody = object.metadata.namespace;
    if (inBody !== undefined && inBody !== '' && inBody !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    object.metadata.namespace = namespace;
  }

  /**
   * Names an object from its `generateName`. A generated name already taken is drawn again,
   * up to eight draws in all, as kube-apiserver does since RetryGenerateName (on by default
   * from 1.31): five random characters collide often enough across thousands of Events of
   * one object to fail a create now and then.
   */
  private generateName(def: ResourceDef, namespace: string | undefined, object: KubeObject): void {
    const meta = object.metadata;
    if (meta.name || !meta.generateName) return;
    const base = meta.generateName.length > 58 ? meta.generateName.slice(0, 58) : meta.generateName;
    for (let attempt = 0; attempt < GENERATE_NAME_ATTEMPTS; attempt += 1) {
      let suffix = '';
      for (let i = 0; i < 5; i += 1) suffix += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
      meta.name = `${base}${suffix}`;
      if (!this.store.get(storageKey(def), namespace, meta.name)) return;
    }
  }

  /** The writes whose objects lost fields to pruning, oldest first (the latest 1,000). */
  prunedWrites(): readonly PruneRecord[] {
    return [...this.pruneLog];
  }

  /**
   * Schema pruning/defaulting/validation for custom resources, plus unknown-field handling.
   * A strict refusal is the decoder's 400 for a body, and for a patch the 422 kube-apiserver
   * gives after applying it, quoting the patched object.
   */
  private applySchema(def: ResourceDef, object: KubeObject, options: WriteOptions, mode: WriteMode, subresource = ''): { outcome?: SchemaOutcome; warnings: string[] } {
    if (!def.schema) return { warnings: [] };
    const patched = mode === 'patch' ? JSON.stringify(object) : '';
    const outcome = applyStructuralSchema(object as Record<string, unknown>, def.schema);
    const unknown = outcome.unknownFields.map((f) => `unknown field "${f}"`);
    if (unknown.length > 0 && (options.fieldValidation === 'Strict' || this.unknownFields === 'refuse')) {
      const refusal = `strict decoding error: ${unknown.join(', ')}`;
      if (mode === 'patch') throw invalid('', '', '', [fieldError('FieldValueInvalid', 'patch', patched, refusal)]);
      throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${refusal}`);
    }
    if (outcome.unknownFields.length > 0) {
      const { namespace, name } = object.metadata;
      this.pruneLog.push({ kind: def.kind, ...(namespace ? { namespace } : {}), name: name ?? '', subresource, fields: outcome.unknownFields });
      if (this.pruneLog.length > PRUNE_LOG_SIZE) this.pruneLog.shift();
    }
    return { outcome, warnings: options.fieldValidation === 'Ignore' ? [] : unknown };
  }

  /** Object meta, kind and schema errors, in the order kube-apiserver reports them. */
  private errorsOf(def: ResourceDef, object: KubeObject, outcome: SchemaOutcome | undefined, current?: KubeObject): FieldError[] {
    const earlier = [...validateObjectMeta(object, nameRuleOf(def)), ...this.kindErrors(def, object, current)];
    return outcome ? validationErrors(earlier, outcome) : earlier;
  }

  private kindErrors(def: ResourceDef, object: KubeObject, current?: KubeObject): FieldError[] {
    if (def.group === 'apps' && def.plural === 'deployments') return validateDeployment(object);
    if (def.group === 'apps' && def.plural === 'controllerrevisions') return validateControllerRevision(object, current);
    if (def.group === 'apiextensions.k8s.io') return validateCrd(object);
    if (def.group === 'admissionregistration.k8s.io' && def.plural === 'validatingadmissionpolicies') return policyErrors(object);
    return [];
  }

  private applyKindDefaults(def: ResourceDef, object: KubeObject, creating: boolean): void {
    if (def.group === '' && def.plural === 'secrets') {
      if (isObject(object.stringData)) {
        const data: Record<string, unknown> = { ...(isObject(object.data) ? object.data : {}) };
        for (const [k, v] of Object.entries(object.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
        object.data = data;
        delete object.stringData;
      }
      if (object.type === undefined) object.type = 'Opaque';
    } else if (def.group === '' && def.plural === 'namespaces' && creating) {
      object.metadata.labels = { ...(object.metadata.labels ?? {}), 'kubernetes.io/metadata.name': object.metadata.name ?? '' };
      object.spec = { finalizers: ['kubernetes'] };
      object.status = { phase: 'Active' };
    } else if (def.group === 'apps' && def.plural === 'deployments') {
      const spec = isObject(object.spec) ? object.spec : {};
      if (spec.replicas === undefined) spec.replicas = 1;
      if (spec.revisionHistoryLimit === undefined) spec.revisionHistoryLimit = 10;
      if (spec.progressDeadlineSeconds === undefined) spec.progressDeadlineSeconds = 600;
      if (spec.strategy === undefined) spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      defaultPodTemplate(spec.template);
      object.spec = spec;
    } else if (def.group === 'apiextensions.k8s.io') {
      defaultCrd(object);
    }
  }

  private prepareCreate(def: ResourceDef, object: KubeObject, options: WriteOptions): string[] {
    const meta = object.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = timestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    if (def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (def.statusSubresource) {
      if (def.group === 'apps') object.status = {};
      else delete object.status;
    }
    this.applyKindDefaults(def, object, true);
    if (def.group === 'apiextensions.k8s.io') object.status = establishedStatus(object, meta.creationTimestamp);
    const schema = this.applySchema(def, object, options, 'create');
    const errors = this.errorsOf(def, object, schema.outcome);
    if (errors.length > 0) throw invalid(def.group, def.kind, meta.name ?? meta.generateName ?? '', errors);
    return schema.warnings;
  }

  private requireNamespace(def: ResourceDef, namespace: string | undefined, name: string): void {
    if (!def.namespaced || namespace === undefined) return;
    const ns = this.store.get('/namespaces', undefined, namespace);
    if (!ns) throw notFound({ group: '', plural: 'namespaces' }, namespace);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(def, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  // ---- writes --------------------------------------------------------------------------

  async create(def: ResourceDef, namespace: string | undefined, body: unknown, options: WriteOptions = {}): Promise<WriteResult> {
    const ns = this.scopeOf(def, namespace);
    const object = this.decode(def, body);
    await this.checkFault('create', def, ns, object.metadata.name, '', options.internal);
    this.checkNamespaceOf(def, object, ns);
    if (object.metadata.resourceVersion !== undefined && object.metadata.resourceVersion !== '') {
      throw new ApiError({ message: 'resourceVersion should not be set on objects to be created', reason: 'Unknown', code: 500 });
    }
    delete object.metadata.resourceVersion;
    this.generateName(def, ns, object);
    const warnings = this.prepareCreate(def, object, options);
    const name = object.metadata.name ?? '';
    this.requireNamespace(def, ns, name);
    if (!options.internal) {
      warnings.push(...(await this.admit(this.attributes('CREATE', def, ns, name, object, undefined, options), options)));
    }
    this.requireNamespace(def, ns, name);
    if (this.store.get(storageKey(def), ns, name)) throw alreadyExists(def, name);
    if (options.dryRun) return { object, warnings, code: 201 };
    const stored = this.store.put(storageKey(def), object);
    this.afterWrite(def, stored, undefined);
    return { object: asServed(def, stored), warnings, code: 201 };
  }

  private attributes(
    operation: AdmissionAttributes['operation'],
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    options: WriteOptions & { propagationPolicy?: string },
    subresource = '',
  ): AdmissionAttributes {
    const optionKind = operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
    const opts: Record<string, unknown> = { kind: optionKind, apiVersion: 'meta.k8s.io/v1' };
    if (options.fieldManager) opts.fieldManager = options.fieldManager;
    if (options.dryRun) opts.dryRun = ['All'];
    if (options.propagationPolicy) opts.propagationPolicy = options.propagationPolicy;
    const attrs: AdmissionAttributes = { operation, def, subresource, name, dryRun: options.dryRun === true, options: opts };
    if (namespace !== undefined) attrs.namespace = namespace;
    if (object) attrs.object = object;
    if (oldObject) attrs.oldObject = oldObject;
    return attrs;
  }

  async update(def: ResourceDef, namespace: string | undefined, name: string, body: unknown, subresource = '', options: WriteOptions = {}): Promise<WriteResult> {
    const ns = this.objectScope(def, namespace, name);
    await this.checkFault('update', def, ns, name, subresource, options.internal);
    const decoded = this.decode(def, body);
    return this.writeUpdate(def, ns, name, subresource, options, 'update', () => structuredClone(decoded));
  }

  async patch(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    subresource = '',
    options: WriteOptions & { force?: boolean } = {},
  ): Promise<WriteResult> {
    const ns = this.objectScope(def, namespace, name);
    await this.checkFault('patch', def, ns, name, subresource, options.internal);
    if (type === 'strategic' && !def.strategicMergeKeys) {
      throw unsupportedMediaType(CUSTOM_RESOURCE_PATCH_TYPES);
    }
    if (type === 'apply') {
      if (!options.fieldManager) throw invalid('meta.k8s.io', 'PatchOptions', '', [fieldError('FieldValueRequired', 'fieldManager', undefined, 'is required for apply patch')]);
      if (!isObject(patch)) throw badRequest('error decoding YAML: apply patch must be an object');
      if (!this.store.get(storageKey(def), ns, name)) {
        const created = await this.create(def, ns, { ...patch, metadata: { ...(isObject(patch.metadata) ? patch.metadata : {}), name } }, { ...options, internal: true });
        return { ...created, code: 201 };
      }
    }
    return this.writeUpdate(def, ns, name, subresource, options, 'patch', (current) => {
      let patched: unknown;
      if (type === 'json') patched = applyJsonPatch(current, patch);
      else if (type === 'merge') patched = applyMergePatch(current, patch);
      else if (type === 'strategic') patched = applyStrategicMergePatch(current, patch, def.strategicMergeKeys ?? {});
      else patched = this.applyConfiguration(def, current, patch);
      if (!isObject(patched)) throw badRequest('the patch does not result in an object');
      return this.decode(def, patched);
    });
  }

  /**
   * Server-side apply, simplified: the applied configuration is merged over the live
   * object (lists by merge key for built-ins). Field ownership is not tracked, so fields
   * dropped from a later configuration are not removed.
   */
  private applyConfiguration(def: ResourceDef, current: KubeObject, patch: unknown): unknown {
    const applied = structuredClone(patch) as Record<string, unknown>;
    if (isObject(applied.metadata)) delete applied.metadata.resourceVersion;
    return def.strategicMergeKeys ? applyStrategicMergePatch(current, applied, def.strategicMergeKeys) : applyMergePatch(current, applied);
  }

  private prepareUpdate(def: ResourceDef, current: KubeObject, body: KubeObject, subresource: string, options: WriteOptions, mode: WriteMode): { next: KubeObject; warnings: string[] } {
    let next: KubeObject;
    if (subresource === 'status') {
      next = structuredClone(current);
      next.apiVersion = groupVersion(def);
      next.kind = def.kind;
      if (body.status !== undefined) next.status = body.status;
      else delete next.status;
    } else {
      next = body;
      const meta = next.metadata;
      const errors = validateMetaUpdate(next, current);
      if (errors.length > 0) throw invalid(def.group, def.kind, current.metadata.name ?? '', errors);
      meta.uid = current.metadata.uid;
      meta.creationTimestamp = current.metadata.creationTimestamp;
      if (current.metadata.generation !== undefined) meta.generation = current.metadata.generation;
      else delete meta.generation;
      if (current.metadata.deletionTimestamp) {
        meta.deletionTimestamp = current.metadata.deletionTimestamp;
        meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
        const added = (meta.finalizers ?? []).filter((f) => !(current.metadata.finalizers ?? []).includes(f));
        if (added.length > 0) {
          throw invalid(def.group, def.kind, current.metadata.name ?? '', [fieldError('FieldValueForbidden', 'metadata.finalizers', undefined, 'no new finalizers can be added if the object is being deleted, found new finalizers []string{"' + added.join('", "') + '"}')]);
        }
      } else {
        delete meta.deletionTimestamp;
        delete meta.deletionGracePeriodSeconds;
      }
      delete meta.managedFields;
      if (def.statusSubresource) {
        if (current.status !== undefined) next.status = structuredClone(current.status);
        else delete next.status;
      }
      if (def.group === '' && def.plural === 'namespaces') next.spec = structuredClone(current.spec);
      this.applyKindDefaults(def, next, false);
    }
    const schema = this.applySchema(def, next, options, mode, subresource);
    // After pruning: a write whose only change was pruned away leaves the generation alone.
    if (subresource !== 'status' && def.tracksGeneration && this.specChanged(def, current, next)) next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    const errors = this.errorsOf(def, next, schema.outcome, current);
    if (errors.length > 0) throw invalid(def.group, def.kind, current.metadata.name ?? '', errors);
    return { next, warnings: schema.warnings };
  }

  /** Generation moves on changes outside metadata (and outside status when status is a subresource). */
  private specChanged(def: ResourceDef, current: KubeObject, next: KubeObject): boolean {
    const ignored = def.statusSubresource ? ['metadata', 'status', 'apiVersion', 'kind'] : ['metadata', 'apiVersion', 'kind'];
    return !deepEqual(without(current, ignored), without(next, ignored));
  }

  private checkIdentity(def: ResourceDef, namespace: string | undefined, name: string, body: KubeObject): void {
    if (body.metadata.name !== undefined && body.metadata.name !== '' && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    }
    body.metadata.name = name;
    this.checkNamespaceOf(def, body, namespace);
  }

  private async writeUpdate(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    subresource: string,
    options: WriteOptions,
    mode: 'update' | 'patch',
    produce: (current: KubeObject) => KubeObject,
  ): Promise<WriteResult> {
    const key = storageKey(def);
    for (let attempt = 0; attempt < 16; attempt += 1) {
      const stored = this.store.get(key, namespace, name);
      if (!stored) throw notFound(def, name);
      const current = asServed(def, stored);
      const body = produce(structuredClone(current));
      this.checkIdentity(def, namespace, name, body);
      const requested = body.metadata.resourceVersion;
      if (requested === undefined || requested === '') {
        if (mode === 'update' && !def.allowUnconditionalUpdate) {
          // The generic store names the resource, not the kind, in this one error.
          throw invalid(def.group, def.plural, name, [fieldError('FieldValueInvalid', 'metadata.resourceVersion', 0, 'must be specified for an update')]);
        }
      } else if (requested !== current.metadata.resourceVersion) {
        throw conflict(def, name);
      }
      const { next, warnings } = this.prepareUpdate(def, current, body, subresource, options, mode);
      next.metadata.resourceVersion = current.metadata.resourceVersion;
      if (!options.internal) {
        warnings.push(...(await this.admit(this.attributes('UPDATE', def, namespace, name, next, current, options, subresource), options)));
      }
      const latest = this.store.get(key, namespace, name);
      if (!latest) throw notFound(def, name);
      if (latest.metadata.resourceVersion !== current.metadata.resourceVersion) continue;
      if (options.dryRun || sameIgnoringVersion(next, current)) return { object: options.dryRun ? next : current, warnings, code: 200 };
      const finalized = (current.metadata.finalizers ?? []).length > 0 && (next.metadata.finalizers ?? []).length === 0;
      if (next.metadata.deletionTimestamp && finalized) {
        this.store.remove(key, namespace, name);
        this.afterRemove(def, next);
        return { object: next, warnings, code: 200 };
      }
      const written = this.store.put(key, next);
      this.afterWrite(def, written, stored);
      return { object: asServed(def, written), warnings, code: 200 };
    }
    throw conflict(def, name);
  }

  async delete(def: ResourceDef, namespace: string | undefined, name: string, params: DeleteParams = {}): Promise<WriteResult> {
    const ns = this.objectScope(def, namespace, name);
    await this.checkFault('delete', def, ns, name, '', params.internal);
    const key = storageKey(def);
    const current = this.store.get(key, ns, name);
    if (!current) throw notFound(def, name);
    this.checkDeletePreconditions(def, current, params.preconditions);
    const isNamespace = def.group === '' && def.plural === 'namespaces';
    if (isNamespace && PROTECTED_NAMESPACES.has(name)) throw forbidden(def, name, 'this namespace may not be deleted');
    const warnings = params.internal
      ? []
      : await this.admit(this.attributes('DELETE', def, ns, name, undefined, asServed(def, current), params), params);
    const latest = this.store.get(key, ns, name);
    if (!latest) throw notFound(def, name);
    this.checkPreconditions(def, latest, params.preconditions);
    const waits = isNamespace || (latest.metadata.finalizers ?? []).length > 0;
    if (params.dryRun) return { object: asServed(def, latest), warnings, code: 200, removed: !waits };
    // 200 with the marked object: kube-apiserver answers 202 only when the client set orphanDependents=false.
    if (waits) return { object: this.markDeleting(def, latest, isNamespace), warnings, code: 200 };
    this.store.remove(key, ns, name);
    this.afterRemove(def, latest, params.propagationPolicy);
    return { object: asServed(def, latest), warnings, code: 200, removed: true };
  }

  /**
   * The early check of a delete's preconditions (the generic registry's BeforeDelete), which
   * names the kind where other conflicts name the resource.
   */
  private checkDeletePreconditions(def: ResourceDef, object: KubeObject, preconditions: DeleteParams['preconditions']): void {
    const name = object.metadata.name ?? '';
    const kind = { group: def.group, plural: def.kind };
    if (preconditions?.uid !== undefined && preconditions.uid !== object.metadata.uid) {
      throw conflict(kind, name, `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${object.metadata.uid ?? ''}). The object might have been deleted and then recreated`);
    }
    if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== object.metadata.resourceVersion) {
      throw conflict(kind, name, `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${object.metadata.resourceVersion ?? ''}). The object might have been modified`);
    }
  }

  /** The storage's check of a delete's preconditions, when the object changed after the early one. */
  private checkPreconditions(def: ResourceDef, object: KubeObject, preconditions: DeleteParams['preconditions']): void {
    const name = object.metadata.name ?? '';
    if (preconditions?.uid !== undefined && preconditions.uid !== object.metadata.uid) {
      throw conflict(def, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${object.metadata.uid ?? ''}`);
    }
    if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== object.metadata.resourceVersion) {
      throw conflict(def, name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${object.metadata.resourceVersion ?? ''}`);
    }
  }

  /** Sets deletionTimestamp on an object that waits for finalizers (or a namespace being emptied). */
  private markDeleting(def: ResourceDef, object: KubeObject, isNamespace: boolean): KubeObject {
    if (object.metadata.deletionTimestamp) return asServed(def, object);
    const next = structuredClone(object);
    next.metadata.deletionTimestamp = timestamp();
    next.metadata.deletionGracePeriodSeconds = 0;
    if (def.tracksGeneration) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
    if (isNamespace) next.status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
    const written = this.store.put(storageKey(def), next);
    if (isNamespace) this.later(() => this.finalizeNamespace(object.metadata.name ?? ''));
    return asServed(def, written);
  }

  /** The namespace controller: delete everything in it, then the namespace itself. */
  private finalizeNamespace(name: string): void {
    const seen = new Set<string>();
    for (const def of this.registry.all()) {
      const key = storageKey(def);
      if (!def.namespaced || seen.has(key)) continue;
      seen.add(key);
      for (const [, object] of this.store.list(key, name)) {
        this.store.remove(key, name, object.metadata.name ?? '');
        this.afterRemove(def, object);
      }
    }
    this.store.remove('/namespaces', undefined, name);
  }

  async deleteCollection(def: ResourceDef, params: ListParams & DeleteParams): Promise<Record<string, unknown>> {
    await this.checkFault('deletecollection', def, params.namespace, undefined, '', params.internal);
    const listed = await this.list(def, { ...params, limit: 0 });
    const deleted: KubeObject[] = [];
    for (const object of listed.items) {
      const { object: gone } = await this.delete(def, object.metadata.namespace, object.metadata.name ?? '', { ...params, internal: params.internal });
      deleted.push(gone);
    }
    return this.listObject(def, { items: deleted, resourceVersion: String(this.store.resourceVersion) });
  }

  // ---- controllers ---------------------------------------------------------------------

  private afterWrite(def: ResourceDef, stored: KubeObject, previous: KubeObject | undefined): void {
    if (def.group === 'apiextensions.k8s.io') {
      this.registry.removeCrd(stored.metadata.name ?? '');
      for (const served of resourcesFromCrd(stored)) {
        this.registry.add(served);
        this.store.markServed(storageKey(served));
      }
    }
    if (def.group === 'apps' && def.plural === 'deployments') this.workloads.observe(def, stored, previous);
  }

  private afterRemove(def: ResourceDef, removed: KubeObject, propagationPolicy?: string): void {
    if (def.group === 'apiextensions.k8s.io') this.removeCustomResources(removed);
    if (propagationPolicy !== 'Orphan' && removed.metadata.uid) {
      const uid = removed.metadata.uid;
      this.later(() => this.collectDependents(uid));
    }
  }

  private removeCustomResources(crd: KubeObject): void {
    const defs = this.registry.removeCrd(crd.metadata.name ?? '');
    const first = defs[0];
    if (!first) return;
    const key = storageKey(first);
    this.store.markUnserved(key);
    for (const [, object] of this.store.list(key)) this.store.remove(key, object.metadata.namespace, object.metadata.name ?? '');
  }

  /** The garbage collector: objects whose owners are all gone follow them. */
  private async collectDependents(ownerUid: string): Promise<void> {
    const seen = new Set<string>();
    const liveUids = new Set<string>();
    const defs = this.registry.all().filter((def) => {
      const key = storageKey(def);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    for (const def of defs) for (const [, o] of this.store.list(storageKey(def))) if (o.metadata.uid) liveUids.add(o.metadata.uid);
    for (const def of defs) {
      for (const [, object] of this.store.list(storageKey(def))) {
        const owners = object.metadata.ownerReferences ?? [];
        if (!owners.some((ref) => ref.uid === ownerUid)) continue;
        if (owners.some((ref) => liveUids.has(ref.uid))) continue;
        await this.delete(def, object.metadata.namespace, object.metadata.name ?? '', { internal: true }).catch(() => undefined);
      }
    }
  }

  /** Creates what a fresh cluster has: the namespaces default, kube-system and kube-public. */
  async bootstrapNamespaces(names: string[]): Promise<void> {
    const def = this.builtin('namespaces');
    for (const name of names) {
      if (this.store.get('/namespaces', undefined, name)) continue;
      await this.create(def, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { internal: true });
    }
  }

  /** Creates or replaces an object as the server itself (used to load manifests at start). */
  async applyInternal(object: KubeObject): Promise<KubeObject> {
    const [group, version] = (object.apiVersion ?? '').includes('/') ? (object.apiVersion ?? '').split('/') : ['', object.apiVersion ?? ''];
    const def = this.registry.byKind(group ?? '', object.kind ?? '');
    if (!def || def.version !== version) throw badRequest(`no matches for kind "${String(object.kind)}" in version "${String(object.apiVersion)}"`);
    const namespace = def.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    const existing = this.store.get(storageKey(def), namespace, object.metadata.name ?? '');
    if (!existing) return (await this.create(def, namespace, object, { internal: true })).object;
    const body = { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } };
    return (await this.update(def, namespace, object.metadata.name ?? '', body, '', { internal: true })).object;
  }
}

export { ApiError };
