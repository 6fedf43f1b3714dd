/**
 * The pure parts of the fleet simulation: the seeded change mix, percentiles, and each
 * change kind's floor (the least a decision on it needs), so the report can set every
 * measured figure beside what no implementation could go below.
 */

/** The changes the simulation makes, as a user of the fleet would. */
export const CHANGE_KINDS = ['runtimeEdit', 'syncToken', 'repin', 'newInferenceService'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** How often each kind is drawn when it can be made (a runtime edit needs the service in sync, a sync token needs it drifted). */
export const CHANGE_WEIGHTS: Readonly<Record<ChangeKind, number>> = {
  runtimeEdit: 3,
  syncToken: 3,
  repin: 2,
  newInferenceService: 2,
};

export interface ChangeFloor {
  /** Kubernetes requests the decision cannot do without, made one after another. */
  kubernetesRequests: number;
  /** DynamoDB operations it cannot do without. */
  dynamoDbOperations: number;
  /** Function invocations: the one that decides. */
  invocations: number;
}

/**
 * The least each change needs. A new InferenceService: read its runtime, create (or find)
 * the revision, write the status. A runtime edit: list the InferenceServices of the runtime,
 * read the pinned revision, write one status. A sync token: read the runtime, create the
 * revision, write the status, and claim the token once in the table. A repin to a named
 * revision: read it, write the status.
 */
export const CHANGE_FLOORS: Readonly<Record<ChangeKind, ChangeFloor>> = {
  runtimeEdit: { kubernetesRequests: 3, dynamoDbOperations: 0, invocations: 1 },
  syncToken: { kubernetesRequests: 3, dynamoDbOperations: 1, invocations: 1 },
  repin: { kubernetesRequests: 2, dynamoDbOperations: 0, invocations: 1 },
  newInferenceService: { kubernetesRequests: 3, dynamoDbOperations: 0, invocations: 1 },
};

/** mulberry32: a small seeded PRNG, so a run's mix can be repeated. Returns numbers in [0, 1). */
export function createPrng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws one of `allowed` by CHANGE_WEIGHTS; undefined when none is allowed. */
export function drawChangeKind(random: () => number, allowed: readonly ChangeKind[]): ChangeKind | undefined {
  const total = allowed.reduce((sum, kind) => sum + CHANGE_WEIGHTS[kind], 0);
  if (total <= 0) return undefined;
  let point = random() * total;
  for (const kind of allowed) {
    point -= CHANGE_WEIGHTS[kind];
    if (point < 0) return kind;
  }
  return allowed[allowed.length - 1];
}

/** The nearest-rank percentile (0 < p ≤ 100) of `values`; undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

/** The floor of a run's mix: each kind's floor weighted by how many of it completed, per change. */
export function floorOfMix(completed: Readonly<Partial<Record<ChangeKind, number>>>): ChangeFloor {
  let changes = 0;
  const sum: ChangeFloor = { kubernetesRequests: 0, dynamoDbOperations: 0, invocations: 0 };
  for (const kind of CHANGE_KINDS) {
    const count = completed[kind] ?? 0;
    changes += count;
    sum.kubernetesRequests += count * CHANGE_FLOORS[kind].kubernetesRequests;
    sum.dynamoDbOperations += count * CHANGE_FLOORS[kind].dynamoDbOperations;
    sum.invocations += count * CHANGE_FLOORS[kind].invocations;
  }
  if (changes === 0) return sum;
  return { kubernetesRequests: sum.kubernetesRequests / changes, dynamoDbOperations: sum.dynamoDbOperations / changes, invocations: sum.invocations / changes };
}

/** Parses `5ms`, `60s`, `2m` (Go durations) or a bare number of milliseconds. */
export function parseMilliseconds(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) throw new Error(`${flag} must be a duration such as 5ms, 60s or 2m (got ${text})`);
  const value = Number(match[1]);
  const unit = match[2] ?? 'ms';
  return unit === 'ms' ? value : unit === 's' ? value * 1_000 : value * 60_000;
}
