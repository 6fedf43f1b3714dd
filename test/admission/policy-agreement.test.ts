/**
 * The admission check that needs no lookup, held twice: by the webhook
 * (shared/use-cases/admission/review-admission.ts) and by the ValidatingAdmissionPolicy of
 * infra/k8s/policy-admission-checks.yaml, as the embedded server evaluates it. The same
 * request goes to both: each is admitted by both or refused by both, with the webhook's
 * words; what the policy leaves to the webhook (a lookup, the rollout shapes, the revision
 * pin's form, whose denial the user guide words as the webhook's) the policy admits, so it
 * is never stricter.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRD_DIRECTORY } from '../../infra/paths';
import type { AdmissionOperation } from '../../local/cluster/admission';
import { policyErrors } from '../../local/cluster/admission-policy';
import { ApiError } from '../../local/cluster/api-errors';
import { builtinResources } from '../../local/cluster/builtins';
import { resourcesFromCrd } from '../../local/cluster/crds';
import { parseManifests } from '../../local/cluster/manifests';
import type { KubeObject, ResourceDef } from '../../local/cluster/registry';
import { reviewAdmissionRequest, type RuntimeLookup } from '../../shared/use-cases/admission/review-admission';
import { REVISION_REQUIRES_PINNING_MESSAGE } from '../../shared/domain/vocabulary';
import { admissionAttributes, policyAdmissionOf, readClusterManifest } from '../support/policy-admission';

const manifests = readClusterManifest('policy-admission-checks.yaml');
const policies = policyAdmissionOf(manifests);

const crdFile = join(CRD_DIRECTORY, 'ome.io_inferenceservices.yaml');
const inferenceServices = resourcesFromCrd(parseManifests(readFileSync(crdFile, 'utf8'), crdFile)[0] as KubeObject)[0];
const controllerRevisions = builtinResources().find((def) => def.plural === 'controllerrevisions');
const USER = { username: 'alice', groups: ['system:authenticated'] };

const NS = 'llama-demo';
const RUNTIME = 'sglang-llama-3-2-3b';
const HASH = '590753e8';
const OME_NS = 'ome';

/** The seed's InferenceService, its runtime fields replaced. */
function isvc(runtime: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'llama-3-2-3b-instruct', namespace: NS },
    spec: {
      model: { name: 'llama-3-2-3b-instruct' },
      ...(runtime ? { runtime } : {}),
      engine: { minReplicas: 1, maxReplicas: 1 },
      ...extra,
    },
  };
}

const pinned = (revision: string, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: RUNTIME,
  kind: 'ServingRuntime',
  autoSync: false,
  revision,
  ...more,
});

function revision(options: { labels?: Record<string, string> | null; createdBy?: string | null; data?: unknown; number?: number } = {}): KubeObject {
  const labels = options.labels === undefined ? { 'ome.io/runtime-of': RUNTIME, 'ome.io/revision-hash': HASH } : options.labels;
  const createdBy = options.createdBy === undefined ? 'ome-controller' : options.createdBy;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `r-${NS}-${RUNTIME}-${HASH}`,
      namespace: OME_NS,
      ...(labels === null ? {} : { labels }),
      annotations: { ...(createdBy === null ? {} : { 'ome.io/created-by': createdBy }), 'ome.io/gc-marked': 'false' },
    },
    data: options.data ?? { containers: [{ name: 'ome-container', args: ['--mem-frac=0.9'] }] },
    revision: options.number ?? 1,
  };
}

interface Case {
  operation: AdmissionOperation;
  object: KubeObject;
  oldObject?: KubeObject;
}

const create = (object: KubeObject): Case => ({ operation: 'CREATE', object });
const update = (oldObject: KubeObject, object: KubeObject): Case => ({ operation: 'UPDATE', object, oldObject });

function defOf(object: KubeObject): ResourceDef {
  const def = object.kind === 'InferenceService' ? inferenceServices : controllerRevisions;
  if (!def) throw new Error(`no definition for ${object.kind}`);
  return def;
}

/** The policies' verdict: undefined when admitted, else the denial's text after `denied request: `. */
function policyVerdict(request: Case): string | undefined {
  const attrs = admissionAttributes(defOf(request.object), {
    operation: request.operation,
    namespace: request.object.metadata.namespace ?? '',
    name: request.object.metadata.name ?? '',
    object: request.object,
    oldObject: request.oldObject,
  });
  try {
    policies.validate(attrs, USER);
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.status).toMatchObject({ code: 422, reason: 'Invalid' });
    return /denied request: (.*)$/s.exec(error.status.message)?.[1] ?? error.status.message;
  }
}

/** The webhook's verdict, its runtime lookup answering as asked. */
async function webhookVerdict(request: Case, live: Awaited<ReturnType<RuntimeLookup>> = { found: true, kind: 'ServingRuntime', disabled: false }): Promise<string | undefined> {
  const def = defOf(request.object);
  const response = await reviewAdmissionRequest(
    {
      uid: 'u-1',
      kind: { group: def.group, version: def.version, kind: def.kind },
      operation: request.operation,
      namespace: request.object.metadata.namespace ?? '',
      object: request.object,
      oldObject: request.oldObject,
    },
    { lookupRuntime: async () => live },
  );
  return response.response.allowed ? undefined : response.response.status?.message;
}

describe('policy-admission-checks.yaml beside the webhook', () => {
  it('compiles with the embedded server', () => {
    for (const policy of manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')) expect(policyErrors(policy)).toEqual([]);
  });

  const deleting = isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`));
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  const deletingWithBadPin = isvc(pinned(`cr-${RUNTIME}-${HASH}`));
  deletingWithBadPin.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';

  it.each<[string, Case]>([
    ['the seed InferenceService (pinned, no revision named)', create(isvc({ name: RUNTIME, kind: 'ServingRuntime', autoSync: false }))],
    ['an InferenceService following its runtime', create(isvc({ name: RUNTIME, autoSync: true }))],
    ['no spec.runtime', create(isvc(undefined))],
    ['an empty revision with autoSync true', create(isvc({ name: RUNTIME, autoSync: true, revision: '' }))],
    ['a ServingRuntime revision of its form', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`)))],
    ['a ClusterServingRuntime revision of its form', create(isvc(pinned(`cr-${RUNTIME}-${HASH}`, { kind: 'ClusterServingRuntime' })))],
    ['no kind: the ClusterServingRuntime form', create(isvc(pinned(`cr-${RUNTIME}-${HASH}`, { kind: undefined })))],
    ['an unknown kind: the ClusterServingRuntime form', create(isvc(pinned(`cr-${RUNTIME}-${HASH}`, { kind: 'Other' })))],
    ['a runtime name with dots', create(isvc(pinned(`cr-sglang.v1-${HASH}`, { name: 'sglang.v1', kind: undefined })))],
    ['no runtime name', create(isvc(pinned(`cr--${HASH}`, { name: undefined, kind: undefined })))],
    ['an update keeping a good pin', update(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`)), isvc(pinned(`r-${NS}-${RUNTIME}-00000000`)))],
    ['an annotation change on an OME revision', update(revision(), { ...revision(), metadata: { ...revision().metadata, annotations: { 'ome.io/created-by': 'ome-controller', 'ome.io/gc-marked': 'true' } } })],
    ['no labels and an empty label set', update(revision({ labels: null }), revision({ labels: {} }))],
    ['a revision OME did not create', update(revision({ createdBy: null }), revision({ createdBy: null, data: { other: true }, number: 2 }))],
    ['a revision created by someone else', update(revision({ createdBy: 'someone' }), revision({ createdBy: 'someone', labels: { 'ome.io/runtime-of': 'x' } }))],
    ['claiming OME made it is judged by the old object', update(revision({ createdBy: null }), revision({ data: { other: true } }))],
  ])('both admit: %s', async (_name, request) => {
    expect(await webhookVerdict(request)).toBeUndefined();
    expect(policyVerdict(request)).toBeUndefined();
  });

  const naming = (revisionName: string, runtime = RUNTIME, kind = 'ServingRuntime', prefix = `r-${NS}-${runtime}-`): string =>
    `spec.runtime.revision "${revisionName}" does not match the expected naming convention for runtime "${runtime}" (${kind}); expected the form ${prefix}<8 lowercase hex chars>`;
  const immutable = (field: string): string => `ControllerRevision ${OME_NS}/r-${NS}-${RUNTIME}-${HASH} is owned by OME; .${field} immutable`;

  it.each<[string, Case, string]>([
    ['a data change', update(revision(), revision({ data: { containers: [] } })), immutable('data is')],
    ['a label change', update(revision(), revision({ labels: { 'ome.io/runtime-of': RUNTIME, 'ome.io/revision-hash': '00000000' } })), immutable('labels are')],
    ['a label removed', update(revision(), revision({ labels: { 'ome.io/runtime-of': RUNTIME } })), immutable('labels are')],
    ['every label removed', update(revision(), revision({ labels: null })), immutable('labels are')],
    ['a label added', update(revision(), revision({ labels: { 'ome.io/runtime-of': RUNTIME, 'ome.io/revision-hash': HASH, extra: 'x' } })), immutable('labels are')],
    ['a revision number change', update(revision(), revision({ number: 2 })), immutable('revision is')],
    ['data and labels: data first', update(revision(), revision({ data: {}, labels: { 'ome.io/runtime-of': RUNTIME } })), immutable('data is')],
  ])('both refuse, with the same words: %s', async (_name, request, reason) => {
    expect(await webhookVerdict(request)).toBe(reason);
    expect(policyVerdict(request)).toBe(reason);
  });

  it.each<[string, Case, string]>([
    ['a revision with autoSync true', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`, { autoSync: true }))), REVISION_REQUIRES_PINNING_MESSAGE],
    ['a revision without autoSync', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`, { autoSync: undefined }))), REVISION_REQUIRES_PINNING_MESSAGE],
    ['a ClusterServingRuntime revision for a ServingRuntime', create(isvc(pinned(`cr-${RUNTIME}-${HASH}`))), naming(`cr-${RUNTIME}-${HASH}`)],
    ['a ServingRuntime revision for a ClusterServingRuntime', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`, { kind: undefined }))), naming(`r-${NS}-${RUNTIME}-${HASH}`, RUNTIME, 'ClusterServingRuntime', `cr-${RUNTIME}-`)],
    ['an uppercase hash', create(isvc(pinned(`r-${NS}-${RUNTIME}-590753E8`))), naming(`r-${NS}-${RUNTIME}-590753E8`)],
    ['a hash of 9 characters', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}0`))), naming(`r-${NS}-${RUNTIME}-${HASH}0`)],
    ['a hash of 7 characters', create(isvc(pinned(`r-${NS}-${RUNTIME}-590753e`))), naming(`r-${NS}-${RUNTIME}-590753e`)],
    ['a suffix that is not hex', create(isvc(pinned(`r-${NS}-${RUNTIME}-zzzzzzzz`))), naming(`r-${NS}-${RUNTIME}-zzzzzzzz`)],
    ['another namespace in the name', create(isvc(pinned(`r-prod-${RUNTIME}-${HASH}`))), naming(`r-prod-${RUNTIME}-${HASH}`)],
    ['another runtime in the name', create(isvc(pinned(`r-${NS}-vllm-${HASH}`))), naming(`r-${NS}-vllm-${HASH}`)],
    ['a hash with nothing before it', create(isvc(pinned(HASH))), naming(HASH)],
    ['an update to a bad pin', update(isvc({ name: RUNTIME, kind: 'ServingRuntime', autoSync: false }), isvc(pinned(`cr-${RUNTIME}-${HASH}`))), naming(`cr-${RUNTIME}-${HASH}`)],
    ['a bad pin on an object being deleted', update(deleting, deletingWithBadPin), naming(`cr-${RUNTIME}-${HASH}`)],
  ])('the revision pin\'s form is the webhook\'s alone, admitted by the policy: %s', async (_name, request, reason) => {
    expect(await webhookVerdict(request)).toBe(reason);
    expect(policyVerdict(request)).toBeUndefined();
  });

  it.each<[string, Case, Awaited<ReturnType<RuntimeLookup>>]>([
    ['a missing runtime (a lookup)', create(isvc({ name: RUNTIME, kind: 'ServingRuntime', autoSync: false })), { found: false }],
    ['a disabled runtime (a lookup)', create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`))), { found: true, kind: 'ServingRuntime', disabled: true }],
    [
      'a rollout shape upstream refuses',
      create(isvc(pinned(`r-${NS}-${RUNTIME}-${HASH}`), { rollout: { groups: [{ components: ['engine'], canary: { steps: [] } }] } })),
      { found: true, kind: 'ServingRuntime', disabled: false },
    ],
  ])('left to the webhook, admitted by the policies: %s', async (_name, request, live) => {
    expect(await webhookVerdict(request, live)).toEqual(expect.any(String));
    expect(policyVerdict(request)).toBeUndefined();
  });
});
