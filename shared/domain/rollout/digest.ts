/**
 * Portable rollout digests (`rp1:` + 12 hex of sha256), computed over the same bytes
 * upstream OME hashes so that the CLI, the controller and `printf … | sha256sum` agree.
 */
import { createHash } from 'node:crypto';
import { marshalGoJson } from '../go-json';
import { rolloutPolicySpecSchema } from './schema';
import type { ProgressionKind, RolloutGroup, RolloutPolicySpec } from './types';

export const DIGEST_PREFIX = 'rp1:';
const DIGEST_HEX_LENGTH = 12;

/** `rp1:` followed by exactly 12 lowercase hex characters. */
export const PORTABLE_DIGEST_PATTERN = /^rp1:[0-9a-f]{12}$/;

/** The digest of `{"blueGreen":{}}`: what a group with no progression and no policy pins. */
export const DEFAULT_GROUP_DIGEST = 'rp1:cca45ec1fb0f';

/** First 12 hex characters of sha256(data): the truncation every rollout identity uses. */
export function hashShort(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex').slice(0, DIGEST_HEX_LENGTH);
}

/** Digest of a RolloutPolicy spec, over its Go JSON (the policy's `status.portableDigest`). */
export function digestPolicySpec(spec: RolloutPolicySpec): string {
  return DIGEST_PREFIX + hashShort(marshalGoJson(spec, rolloutPolicySpecSchema));
}

/**
 * Digest of one progression body wrapped by its kind, `{"<kind>": body}`. Wrapping it
 * as a policy spec is deliberate: an inline body and a policy carrying the same body
 * digest the same, so moving a progression into a policy shows no drift.
 */
export function digestProgression(kind: ProgressionKind, body: unknown): string {
  return digestPolicySpec({ [kind]: body ?? {} } as RolloutPolicySpec);
}

/**
 * Digest of a group's progression. A group with no inline progression digests as the
 * default `{"blueGreen":{}}` — the plan it actually runs — never as blank (upstream
 * reports blank there, which leaves its drift check stuck; we do not).
 */
export function digestGroupProgression(group: RolloutGroup): string {
  return digestPolicySpec({
    canary: group.canary,
    blueGreen: group.blueGreen ?? (group.canary || group.rollingUpdate ? undefined : {}),
    rollingUpdate: group.rollingUpdate,
  });
}

/** Whole-plan digest: the group digests joined by `|` in group order (order is content). */
export function digestPlan(groupDigests: readonly string[]): string {
  return DIGEST_PREFIX + hashShort(groupDigests.join('|'));
}
