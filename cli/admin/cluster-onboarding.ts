/**
 * The work of `kubectl ome admin cluster …`, over narrow ports: a cluster client that
 * reads, creates, replaces and deletes, and the registry table. Register installs what a
 * cluster needs (CRDs when absent, the plane's namespace, every RBAC and policy manifest,
 * the webhook with the cluster's URL and token), then writes the record; deregister removes
 * them again.
 */
import type { SyncWave } from '../../shared/domain/fleet/sync-wave';
import { renderWebhookConfiguration } from '../../shared/use-cases/admission/webhook-configuration';
import { deriveWebhookToken, frontDoorEntryOf } from '../../shared/domain/webhook/webhook-token';
import type { FrontDoorStore } from '../../shared/adapters/front-door';
import type { WebhookFailurePolicy } from '../../shared/domain/webhook/webhook-settings';
import { AlreadyExistsError, NotFoundError } from '../../shared/domain/errors';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import type { ClusterCredentials, ClusterMode, ClusterRecord } from '../../shared/ports/store';
import { CliError } from '../errors';
import { resourceTypeOf } from './cluster-kinds';
import type { OnboardingManifests } from './cluster-manifests';

/** How the plane serves the cluster (shared/domain/cluster-mode.ts), in the order `--mode` lists them. */
export const CLUSTER_MODES: readonly ClusterMode[] = ['standalone', 'delegate'];

/** The registry record register writes. */
export type RegisteredCluster = ClusterRecord;

/** Marks a CRD register created, so deregister --delete-crds removes only those. */
export const INSTALLED_BY_ANNOTATION = 'ome.io/installed-by';
export const INSTALLED_BY = 'kubectl-ome-admin-cluster-register';

export type AdminClusterClient = Pick<ClusterClient, 'get' | 'create' | 'replace' | 'delete'>;

/** The registry as admin commands use it: the functions' registry plus describe's and deregister's reads and deletes. */
export interface ClusterAdminRegistry {
  getCluster(id: string): Promise<ClusterRecord | undefined>;
  listClusters(): Promise<ClusterRecord[]>;
  putCluster(record: ClusterRecord): Promise<void>;
  deleteCluster(record: Pick<ClusterRecord, 'id'>): Promise<void>;
  listCheckpoints(clusterId: string): Promise<Array<{ resource: string; resourceVersion: string; updatedAt: number; leaseKey?: string }>>;
  readLease(key: string): Promise<{ holder?: string; expiresAt: number } | undefined>;
  loadForwarderError(clusterId: string): Promise<{ message: string; at: number } | undefined>;
  /** The fleet sync waves (the dashboard shows the running ones). */
  listWaves?(): Promise<SyncWave[]>;
}

export type StepAction = 'created' | 'updated' | 'present' | 'skipped' | 'deleted' | 'absent' | 'kept' | 'written';

export interface Step {
  kind: string;
  name: string;
  namespace?: string;
  action: StepAction;
  note?: string;
}

export interface WebhookInput {
  /** The webhook endpoint without a path (the stack's AdmissionWebhookUrl, or `npm start`'s). */
  baseUrl: string;
  key: Buffer;
  caBundle?: string;
  failurePolicy?: WebhookFailurePolicy;
  /** The front door's store, where the cluster's token digest goes; absent: the step says what to run. */
  frontDoor?: FrontDoorStore;
}

export interface RegisterInput {
  id: string;
  mode: ClusterMode;
  server: string;
  caData?: string;
  credentials: ClusterCredentials;
  omeNamespace: string;
  /** The operator's labels, for choosing clusters by selector. */
  labels?: Record<string, string>;
  /** Absent: no webhook is installed (said in the steps). */
  webhook?: WebhookInput;
  /**
   * Register even where the API server does not serve ValidatingAdmissionPolicy (Kubernetes
   * before 1.30), so the admission policies cannot be installed (`--without-policy`).
   */
  withoutPolicy?: boolean;
}

/** What a cluster without the admission policies loses, for the refusal and the step's note. */
export const WITHOUT_POLICY_LOSS =
  'the owned-Deployments, plane-Events and revision-immutability admission policies cannot be installed, so a leaked credential of pin, drift-check, repin-apply or rollout-run could write any Deployment in any namespace (one that runs as another ServiceAccount, privileged or on the host) and Events about any object in any namespace, and OME revisions are guarded only while the admission webhook answers';

const POLICY_KINDS = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
const NAMESPACE_KIND = 'Namespace';

const CLUSTER_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Parses `--mode`: required, no default. */
export function parseClusterMode(raw: string | undefined): ClusterMode {
  if (raw === undefined || raw === '') throw new CliError('--mode is required: standalone or delegate');
  if (!(CLUSTER_MODES as readonly string[]).includes(raw)) throw new CliError(`invalid argument "${raw}" for "--mode" flag: must be standalone or delegate`);
  return raw as ClusterMode;
}

/** A cluster id is a DNS label: it names secrets, leases and webhook URLs. */
export function checkClusterId(id: string | undefined): string {
  if (!id || !CLUSTER_ID.test(id)) throw new CliError(`cluster id "${id ?? ''}" must be a DNS label: lowercase letters, digits and '-', at most 63 characters`);
  return id;
}

/** The record register writes, from its input. */
export function buildClusterRecord(input: RegisterInput): RegisteredCluster {
  return {
    id: input.id,
    mode: input.mode,
    server: input.server,
    ...(input.caData ? { caData: input.caData } : {}),
    credentials: input.credentials,
    omeNamespace: input.omeNamespace,
    ...(input.labels && Object.keys(input.labels).length > 0 ? { labels: { ...input.labels } } : {}),
  };
}

function describeObject(object: KubeObject): Pick<Step, 'kind' | 'name' | 'namespace'> {
  return { kind: object.kind ?? '', name: object.metadata.name, ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}) };
}

/** Creates the object, or replaces the one of that name; a kind the server does not serve is skipped. */
async function createOrReplace(client: AdminClusterClient, object: KubeObject): Promise<Step> {
  const type = resourceTypeOf(object.kind ?? '');
  try {
    await client.create(type, object);
    return { ...describeObject(object), action: 'created' };
  } catch (error) {
    if (error instanceof NotFoundError) {
      // The API server does not serve the kind (ValidatingAdmissionPolicy before 1.30).
      return { ...describeObject(object), action: 'skipped', note: `${type.plural}.${type.group || 'core'} is not served by this API server` };
    }
    if (!(error instanceof AlreadyExistsError)) throw error;
  }
  const existing = await client.get(type, object.metadata.namespace, object.metadata.name);
  await client.replace(type, { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } });
  return { ...describeObject(object), action: 'updated' };
}

/** Installs a CRD only when the cluster has none of that name: OME's own CRDs win. */
async function installCrd(client: AdminClusterClient, crd: KubeObject): Promise<Step> {
  const type = resourceTypeOf('CustomResourceDefinition');
  try {
    await client.get(type, undefined, crd.metadata.name);
    return { ...describeObject(crd), action: 'present' };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  const annotations = { ...(crd.metadata.annotations ?? {}), [INSTALLED_BY_ANNOTATION]: INSTALLED_BY };
  await client.create(type, { ...crd, metadata: { ...crd.metadata, annotations } });
  return { ...describeObject(crd), action: 'created' };
}

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * An admission policy as this cluster needs it: one that selects OME's namespace by name
 * (the revision immutability policy, written for `ome`) selects the cluster's own, as the
 * rendered webhook does, so it never judges revisions the webhook would not see.
 */
export function renderClusterPolicy(policy: KubeObject, omeNamespace: string): KubeObject {
  const spec = policy.spec as { matchConstraints?: { namespaceSelector?: { matchLabels?: Record<string, string> } } } | undefined;
  const selector = spec?.matchConstraints?.namespaceSelector;
  if (policy.kind !== 'ValidatingAdmissionPolicy' || selector?.matchLabels?.[NAMESPACE_NAME_LABEL] === undefined) return policy;
  const matchConstraints = { ...spec?.matchConstraints, namespaceSelector: { ...selector, matchLabels: { ...selector.matchLabels, [NAMESPACE_NAME_LABEL]: omeNamespace } } };
  return { ...policy, spec: { ...spec, matchConstraints } };
}

export function renderClusterWebhook(manifests: OnboardingManifests, clusterId: string, omeNamespace: string, webhook: WebhookInput): KubeObject {
  return renderWebhookConfiguration(manifests.webhookTemplate, {
    baseUrl: webhook.baseUrl,
    clusterId,
    omeNamespace,
    token: deriveWebhookToken(webhook.key, clusterId),
    ...(webhook.caBundle ? { caBundle: webhook.caBundle } : {}),
    ...(webhook.failurePolicy ? { failurePolicy: webhook.failurePolicy } : {}),
  });
}

/**
 * Onboards a cluster: the admission policies, the plane's namespace (before the
 * ServiceAccounts in it), CRDs when absent, every other access manifest, the webhook, then
 * the record (last, so the plane never serves a cluster whose permissions are not in place yet).
 */
export async function registerCluster(
  client: AdminClusterClient,
  registry: Pick<ClusterAdminRegistry, 'putCluster'>,
  manifests: OnboardingManifests,
  input: RegisterInput,
): Promise<Step[]> {
  const steps: Step[] = [];
  // The admission policies first: where the server cannot take them, nothing else is
  // installed unless the operator accepts the loss.
  const policies = manifests.access.filter((object) => POLICY_KINDS.has(object.kind ?? ''));
  for (const policy of policies) {
    const step = await createOrReplace(client, renderClusterPolicy(policy, input.omeNamespace));
    if (step.action === 'skipped' && !input.withoutPolicy) {
      throw new CliError(`${step.note}: ${WITHOUT_POLICY_LOSS}. Use Kubernetes 1.30 or later, or pass --without-policy to register without it`);
    }
    steps.push(step.action === 'skipped' ? { ...step, note: `${step.note} (--without-policy: ${WITHOUT_POLICY_LOSS})` } : step);
  }
  const namespaces = manifests.access.filter((object) => object.kind === NAMESPACE_KIND);
  for (const namespace of namespaces) steps.push(await createOrReplace(client, namespace));
  for (const crd of manifests.crds) steps.push(await installCrd(client, crd));
  for (const object of manifests.access) {
    if (!POLICY_KINDS.has(object.kind ?? '') && object.kind !== NAMESPACE_KIND) steps.push(await createOrReplace(client, object));
  }
  if (input.mode === 'delegate') {
    // Upstream OME's own webhooks judge in a delegate cluster (docs/admission.md).
    steps.push({ kind: 'ValidatingWebhookConfiguration', name: webhookNameOf(manifests), action: 'skipped', note: 'delegate mode: upstream OME\'s webhooks judge' });
  } else if (input.webhook) {
    steps.push(await admitAtFrontDoor(input.id, input.webhook));
    steps.push(await createOrReplace(client, renderClusterWebhook(manifests, input.id, input.omeNamespace, input.webhook)));
  } else {
    steps.push({ kind: 'ValidatingWebhookConfiguration', name: webhookNameOf(manifests), action: 'skipped', note: 'no --webhook-url given' });
  }
  await registry.putCluster(buildClusterRecord(input));
  steps.push({ kind: 'ClusterRecord', name: input.id, action: 'written', note: `mode ${input.mode}` });
  return steps;
}

/** The kind of the front door's entry in the steps' table. */
const FRONT_DOOR_ENTRY = 'FrontDoorEntry';

/**
 * Lets the cluster's calls through the webhook's front door: its token's digest under
 * `cluster/<id>`, written before the webhook that makes the calls. Without a store, the
 * step says how to write it: until then the front door refuses the cluster's calls.
 */
async function admitAtFrontDoor(id: string, webhook: WebhookInput): Promise<Step> {
  const entry = frontDoorEntryOf(id, deriveWebhookToken(webhook.key, id));
  if (!webhook.frontDoor) {
    return {
      kind: FRONT_DOOR_ENTRY,
      name: entry.key,
      action: 'skipped',
      note: `no --front-door-kvs given: the front door refuses this cluster's calls until its entry is written (aws cloudfront-keyvaluestore put-key --key ${entry.key} --value ${entry.value}; docs/admission.md)`,
    };
  }
  await webhook.frontDoor.put(entry.key, entry.value);
  return { kind: FRONT_DOOR_ENTRY, name: entry.key, action: 'written', note: webhook.frontDoor.where };
}

function webhookNameOf(manifests: OnboardingManifests): string {
  const match = /^\s*name:\s*(\S+)/m.exec(manifests.webhookTemplate.replace(/^#.*$/gm, ''));
  return match?.[1] ?? 'ome-pinning-webhook';
}

async function deleteIfPresent(client: AdminClusterClient, object: KubeObject): Promise<Step> {
  const type = resourceTypeOf(object.kind ?? '');
  try {
    await client.delete(type, object.metadata.namespace, object.metadata.name);
    return { ...describeObject(object), action: 'deleted' };
  } catch (error) {
    if (error instanceof NotFoundError) return { ...describeObject(object), action: 'absent' };
    throw error;
  }
}

/**
 * Undoes register: the record and its checkpoints first (the plane stops serving the
 * cluster), then the webhook and the access manifests, the plane's namespace last. CRDs stay
 * unless `deleteCrds`, and then only those register created: deleting a CRD deletes every
 * object of its kind.
 */
export async function deregisterCluster(
  client: AdminClusterClient,
  registry: Pick<ClusterAdminRegistry, 'getCluster' | 'deleteCluster'>,
  manifests: OnboardingManifests,
  options: { id: string; deleteCrds: boolean; frontDoor?: FrontDoorStore },
): Promise<Step[]> {
  const steps: Step[] = [];
  if (options.frontDoor) {
    // First: the cluster's calls stop at the edge, whatever else is left behind.
    const key = frontDoorEntryOf(options.id, '').key;
    steps.push({ kind: FRONT_DOOR_ENTRY, name: key, action: await options.frontDoor.delete(key), note: options.frontDoor.where });
  }
  const record = await registry.getCluster(options.id);
  if (record) {
    await registry.deleteCluster(record);
    steps.push({ kind: 'ClusterRecord', name: options.id, action: 'deleted' });
  } else {
    steps.push({ kind: 'ClusterRecord', name: options.id, action: 'absent' });
  }
  steps.push(await deleteIfPresent(client, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: webhookNameOf(manifests) } }));
  const access = [...manifests.access].reverse();
  const namespaces = access.filter((object) => object.kind === NAMESPACE_KIND);
  for (const object of access) if (object.kind !== NAMESPACE_KIND) steps.push(await deleteIfPresent(client, object));
  for (const namespace of namespaces) steps.push(await deleteIfPresent(client, namespace));
  for (const crd of manifests.crds) {
    if (!options.deleteCrds) {
      steps.push({ ...describeObject(crd), action: 'kept', note: 'pass --delete-crds to remove CRDs register installed' });
      continue;
    }
    const type = resourceTypeOf('CustomResourceDefinition');
    let live: KubeObject;
    try {
      live = await client.get(type, undefined, crd.metadata.name);
    } catch (error) {
      if (error instanceof NotFoundError) {
        steps.push({ ...describeObject(crd), action: 'absent' });
        continue;
      }
      throw error;
    }
    if (live.metadata.annotations?.[INSTALLED_BY_ANNOTATION] !== INSTALLED_BY) {
      steps.push({ ...describeObject(crd), action: 'kept', note: 'not installed by register' });
      continue;
    }
    steps.push(await deleteIfPresent(client, crd));
  }
  return steps;
}

/** The Kubernetes groups the access manifests bind, one per function (`ome-pinning:<function>`). */
export function boundGroups(manifests: OnboardingManifests): string[] {
  const groups = new Set<string>();
  for (const object of manifests.access) {
    const subjects = (object as KubeObject & { subjects?: Array<{ kind?: string; name?: string }> }).subjects ?? [];
    for (const subject of subjects) if (subject.kind === 'Group' && subject.name) groups.add(subject.name);
  }
  return [...groups].sort();
}

/** The stack's logical role id of each function group (serverless.yml). */
export const FUNCTION_ROLES: Readonly<Record<string, string>> = {
  'ome-pinning:admission-webhook': 'AdmissionWebhookRole',
  'ome-pinning:drift-check': 'DriftCheckRole',
  'ome-pinning:forwarder': 'ForwardWatchEventsRole',
  'ome-pinning:pin': 'PinRole',
  'ome-pinning:repin-apply': 'RepinApplyRole',
  'ome-pinning:resync': 'ResyncRole',
  'ome-pinning:revision-gc': 'RevisionGcRole',
  'ome-pinning:rollout-run': 'RolloutRunRole',
};

/**
 * The `aws eks create-access-entry` commands that map each function's role to its group.
 * Printed, not run: the roles' ARNs come from the deployed stack, which the operator's own
 * AWS credentials read. No access policy is associated; the RBAC is all the access.
 */
export function eksAccessEntryCommands(manifests: OnboardingManifests, eks: { clusterName: string; region: string; stack: string }): string[] {
  return boundGroups(manifests).map((group) => {
    const role = FUNCTION_ROLES[group] ?? '<RoleLogicalId>';
    const arn =
      `"$(aws iam get-role --query Role.Arn --output text --role-name "$(aws cloudformation describe-stack-resource --region ${eks.region} ` +
      `--stack-name ${eks.stack} --logical-resource-id ${role} --query StackResourceDetail.PhysicalResourceId --output text)")"`;
    return `aws eks create-access-entry --region ${eks.region} --cluster-name ${eks.clusterName} --kubernetes-groups ${group} --principal-arn ${arn}`;
  });
}
