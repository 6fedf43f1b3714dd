/**
 * The DynamoDB-backed stores: leases, idempotency records, forwarder checkpoints and the
 * cluster registry. One table holds them all (see docs/storage.md). The in-memory
 * implementation and the DynamoDB one pass the same contract suite.
 */

export interface Lease {
  key: string;
  holder: string;
  /** Strictly increases on every acquisition of the key; writes carry it to fence out old holders. */
  fencingToken: number;
  /** Epoch milliseconds after which another holder may take the lease over. */
  expiresAt: number;
  /**
   * True when this acquisition took the lease from another holder that never released it
   * (it crashed, or is paused and may still wake up and write). The new holder then raises
   * the fence on what it writes, so the old holder's late writes are refused.
   */
  takenOver?: boolean;
}

export interface LeaseStore {
  /** Takes the lease when it is free or expired; undefined when another holder has it. */
  acquire(key: string, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a held lease; throws LeaseLostError when it was taken over. */
  renew(lease: Lease, ttlMs: number): Promise<Lease>;
  /** Gives the lease up; a lease already taken over is left alone. */
  release(lease: Lease): Promise<void>;
}

export interface ClaimOptions {
  /**
   * How long a claim stays in progress when the caller cannot say how long it may still
   * run. Also the fallback when `remainingTimeMs` is 0, negative or not a number.
   */
  inProgressTtlMs: number;
  recordTtlSeconds: number;
  /** The invocation's remaining time (Lambda's `getRemainingTimeInMillis()`), when known. */
  remainingTimeMs?: number;
  /**
   * Hash of the request the key stands for (`hashIdempotencyPayload`). A live record of the
   * same key with another hash is a different request under a colliding key: the claim
   * throws IdempotencyPayloadMismatchError and nothing acts on it.
   */
  payloadHash?: string;
  /**
   * Who claims (the request id). A claim already held by the same owner is granted again,
   * so a retry of a claim whose reply was lost (it succeeded server-side) is not mistaken
   * for another worker's claim; abandon with an owner only drops that owner's claim.
   */
  owner?: string;
}

export type IdempotencyClaim =
  | { state: 'claimed' }
  | { state: 'in-progress' }
  | { state: 'completed'; result: unknown };

/**
 * At-most-once records for sync tokens and repin requests, keyed by
 * cluster, object uid and token (see `idempotencyKey`).
 */
export interface IdempotencyStore {
  /**
   * Claims the key: one conditional write. A key in progress whose claim expired
   * can be claimed again (the earlier worker died).
   */
  claim(key: string, options: ClaimOptions): Promise<IdempotencyClaim>;
  /** Marks a claimed key done with the outcome to return to later duplicates. */
  complete(key: string, result: unknown): Promise<void>;
  /**
   * Drops a claim after a retryable failure so a redelivery can try again. With `owner`,
   * only a claim that owner holds: a claim another worker took over stays.
   */
  abandon(key: string, owner?: string): Promise<void>;
}

export function idempotencyKey(clusterId: string, uid: string, scope: 'runtime-sync' | 'rollout-repin', token: string): string {
  return `${scope}#${clusterId}#${uid}#${token}`;
}

export interface CheckpointStore {
  /** The last resourceVersion forwarded for a cluster and resource, if any. */
  loadCheckpoint(clusterId: string, resource: string): Promise<string | undefined>;
  /** Stores it, fenced by the forwarder's lease (LeaseLostError when a newer holder wrote). */
  saveCheckpoint(clusterId: string, resource: string, resourceVersion: string, lease: Lease): Promise<void>;
}

export type ClusterCredentials =
  | { kind: 'kubeconfig'; kubeconfig: string; context?: string }
  | { kind: 'secret'; secretArn: string }
  | { kind: 'eks'; clusterName: string; region: string };

export interface ClusterRecord {
  id: string;
  server: string;
  caData?: string;
  credentials: ClusterCredentials;
  /** OME's namespace in this cluster, where revisions live. */
  omeNamespace: string;
}

export interface ClusterRegistry {
  getCluster(id: string): Promise<ClusterRecord | undefined>;
  listClusters(): Promise<ClusterRecord[]>;
  putCluster(record: ClusterRecord): Promise<void>;
}

/** The four stores a process needs, over one backing table (or one in-memory state). */
export interface Stores {
  leases: LeaseStore;
  idempotency: IdempotencyStore;
  checkpoints: CheckpointStore;
  clusters: ClusterRegistry;
}
