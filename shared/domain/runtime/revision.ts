import { createHash } from 'node:crypto';
import { InvalidInputError } from '../errors';
import type { KubeObject } from '../model/kube-object';
import { Annotation, CREATED_BY_OME, Label, RuntimeKind, type RuntimeKindName } from '../vocabulary';
import { marshalGoJson, type JsonValue } from './go-json';

/**
 * Runtime revisions: the content hash of a resolved runtime spec, the revision's name,
 * and the ControllerRevision that stores it. Names and labels are upstream OME's, so a
 * cluster can move between OME's controller and this control plane without re-pinning.
 */

/** Kubernetes' limit for a DNS-1123 subdomain, the form of a ControllerRevision name. */
export const MAX_REVISION_NAME_LENGTH = 253;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SHORT_HASH = /^[0-9a-f]{8}$/;

export interface RevisionHash {
  /** 64 lowercase hex chars, for auditing collisions. */
  full: string;
  /** The first 8: what names and the `ome.io/revision-hash` label carry. */
  short: string;
}

/**
 * Hashes a resolved runtime spec exactly as upstream does: sha256 over the bytes that Go's
 * `json.Marshal` writes for the ServingRuntimeSpec.
 * @throws InvalidInputError when the spec does not decode into a ServingRuntimeSpec
 */
export function computeRevisionHash(mergedSpec: unknown): RevisionHash {
  if (mergedSpec === null || typeof mergedSpec !== 'object' || Array.isArray(mergedSpec)) {
    throw new InvalidInputError('runtime revision hash needs a spec object');
  }
  const full = createHash('sha256').update(marshalGoJson(mergedSpec), 'utf8').digest('hex');
  return { full, short: full.slice(0, 8) };
}

/** Returns the revision's data: the hashed JSON, as an object. */
export function computeRevisionData(mergedSpec: unknown): JsonValue {
  return JSON.parse(marshalGoJson(mergedSpec)) as JsonValue;
}

export interface RevisionSource {
  kind: RuntimeKindName;
  /** The ISVC's namespace for a ServingRuntime; ignored for a ClusterServingRuntime. */
  namespace: string;
  runtimeName: string;
}

/** The `kind` of `spec.runtime`, with upstream's default: anything but ServingRuntime is cluster-scoped. */
export function normalizeRuntimeKind(kind: string | undefined | null): RuntimeKindName {
  return kind === RuntimeKind.namespaced ? RuntimeKind.namespaced : RuntimeKind.cluster;
}

/** The name prefix every revision of this runtime has, up to the hash. */
export function computeRevisionPrefix({ kind, namespace, runtimeName }: RevisionSource): string {
  return kind === RuntimeKind.namespaced ? `r-${namespace}-${runtimeName}-` : `cr-${runtimeName}-`;
}

/**
 * Returns `cr-<runtime>-<hash>` or `r-<namespace>-<runtime>-<hash>`.
 *
 * Upstream builds the name without checking its length, so a long namespace plus runtime
 * name makes the create fail at the API server. We refuse such a name up front with a
 * clear error instead of truncating: a truncated name would no longer pass the webhook's
 * naming check, and users could not pin it.
 * @throws InvalidInputError when the hash is not 8 lowercase hex chars or the name is not a valid ControllerRevision name
 */
export function computeRevisionName(source: RevisionSource & { hash: string }): string {
  if (!SHORT_HASH.test(source.hash)) {
    throw new InvalidInputError(`revision hash ${JSON.stringify(source.hash)} is not 8 lowercase hex chars`);
  }
  const name = `${computeRevisionPrefix(source)}${source.hash}`;
  if (name.length > MAX_REVISION_NAME_LENGTH) {
    throw new InvalidInputError(
      `revision name ${name.slice(0, 40)}… is ${name.length} characters; ControllerRevision names are at most ${MAX_REVISION_NAME_LENGTH}: shorten the runtime's name`,
    );
  }
  if (!DNS1123_SUBDOMAIN.test(name)) {
    throw new InvalidInputError(`revision name ${JSON.stringify(name)} is not a DNS-1123 subdomain`);
  }
  return name;
}

export interface ParsedRevisionName {
  kind: RuntimeKindName;
  /** The runtime name, for `cr-`; for `r-`, namespace and runtime joined by `-` (ambiguous without context). */
  rest: string;
  hash: string;
}

/**
 * Splits a revision name into its prefix kind, the middle and the hash. The middle of an
 * `r-` name cannot be split into namespace and runtime without knowing one of them (both
 * may contain `-`); {@link matchesRevisionName} answers that question.
 */
export function parseRevisionName(name: string): ParsedRevisionName | undefined {
  const match = /^(cr|r)-(.+)-([0-9a-f]{8})$/.exec(name);
  if (!match || name.length > MAX_REVISION_NAME_LENGTH) return undefined;
  return {
    kind: match[1] === 'cr' ? RuntimeKind.cluster : RuntimeKind.namespaced,
    rest: match[2] ?? '',
    hash: match[3] ?? '',
  };
}

/** True when `name` has the form of a revision of this runtime (upstream's MatchesRuntime). */
export function matchesRevisionName(name: string, source: RevisionSource): boolean {
  const prefix = computeRevisionPrefix(source);
  return name.startsWith(prefix) && SHORT_HASH.test(name.slice(prefix.length));
}

/** The webhook's reason for a `spec.runtime.revision` of the wrong form, word for word. */
export function formatRevisionNamingMessage(revision: string, source: RevisionSource): string {
  return `spec.runtime.revision ${JSON.stringify(revision)} does not match the expected naming convention for runtime ${JSON.stringify(source.runtimeName)} (${source.kind}); expected the form ${computeRevisionPrefix(source)}<8 lowercase hex chars>`;
}

/** Returns the webhook's message when `revision` cannot name a revision of this runtime, else undefined. */
export function validateRevisionName(revision: string, source: RevisionSource): string | undefined {
  return matchesRevisionName(revision, source) ? undefined : formatRevisionNamingMessage(revision, source);
}

export interface ControllerRevisionObject extends KubeObject {
  data: JsonValue;
  revision: number;
}

export interface BuildControllerRevisionInput extends RevisionSource {
  /** The inheritance-merged spec to snapshot. */
  mergedSpec: unknown;
  /** OME's namespace, where every revision lives (`ome` by default). */
  omeNamespace: string;
}

/**
 * Builds the ControllerRevision that snapshots a runtime's resolved spec, as upstream's
 * store writes it: labels runtime-of, runtime-of-kind, runtime-of-namespace ("" for a
 * cluster runtime) and revision-hash; annotation created-by; `revision: 1` (unused,
 * but the API requires a positive value).
 */
export function buildControllerRevision(input: BuildControllerRevisionInput): ControllerRevisionObject {
  const { short } = computeRevisionHash(input.mergedSpec);
  const sourceNamespace = input.kind === RuntimeKind.namespaced ? input.namespace : '';
  const name = computeRevisionName({ ...input, hash: short });
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      namespace: input.omeNamespace,
      labels: {
        [Label.runtimeOf]: input.runtimeName,
        [Label.runtimeOfKind]: input.kind,
        [Label.runtimeOfNamespace]: sourceNamespace,
        [Label.revisionHash]: short,
      },
      annotations: { [Annotation.createdBy]: CREATED_BY_OME },
    },
    data: computeRevisionData(input.mergedSpec),
    revision: 1,
  };
}
