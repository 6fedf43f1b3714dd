/**
 * The DynamoDB-backed stores: leases, idempotency records, forwarder checkpoints and the
 * cluster registry. One table holds them all (see docs/storage.md). The in-memory
 * implementation and the DynamoDB one pass the same contract suite.
 */
import { createHash } from 'node:crypto';
import type { FleetDriftReport } from '../domain/fleet/fleet-drift';
import type { FreezeWindow } from '../domain/fleet/freeze-window';
import type { SyncWave } from '../domain/fleet/sync-wave';
import type { ClusterMode } from '../domain/cluster-mode';

export type { ClusterMode } from '../domain/cluster-mode';

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
  /**
   * As `acquire`, but a refusal says until when the other holder's lease runs (the expiry it
   * last wrote, on its clock), when the store learns that with the refusal itself at no extra
   * call. For scheduling a retry only, never for safety. Optional: stores without it use `acquire`.
   */
  tryAcquire?(key: string, holder: string, ttlMs: number): Promise<{ lease: Lease } | { heldUntil: number | undefined }>;
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

/** Marks the hashed part of an idempotency key, so a reader of the table knows what it holds. */
export const TOKEN_HASH_PREFIX = 'sha256:';

/**
 * The key of one at-most-once record. The token is a user's annotation value, which may be
 * any string up to the API server's annotation limit (262,144 B): a timestamp with `:`, a
 * value with spaces or `#`, hundreds of characters. The key holds its SHA-256 (hex) instead,
 * so it has a fixed size, well inside DynamoDB's 2,048 B partition key, and cannot be
 * confused with the `#` separators.
 */
export function idempotencyKey(clusterId: string, uid: string, scope: 'runtime-sync' | 'rollout-repin' | 'unowned-deployment', token: string): string {
  return `${scope}#${clusterId}#${uid}#${TOKEN_HASH_PREFIX}${createHash('sha256').update(token, 'utf8').digest('hex')}`;
}

/** Per watched resource of a cluster, the last resourceVersion forwarded. */
export type Checkpoints = Record<string, string>;

export interface CheckpointStore {
  /** The cluster's checkpoints, every resource in one read; empty when none was saved. */
  loadCheckpoints(clusterId: string): Promise<Checkpoints>;
  /**
   * Stores every resource's checkpoint of the cluster as one item (the DynamoDB store
   * gathers a window's saves into one call), fenced by the forwarder's lease:
   * LeaseLostError, and nothing written, when the lease expired before the write.
   */
  saveCheckpoints(clusterId: string, checkpoints: Checkpoints, lease: Lease): Promise<void>;
  /** Keeps the forwarder's latest warning or error for the cluster, for `kubectl ome admin cluster describe`. */
  recordForwarderError(clusterId: string, message: string): Promise<void>;
  /** The latest one recorded, if any. */
  loadForwarderError(clusterId: string): Promise<ForwarderError | undefined>;
}

export interface ForwarderError {
  message: string;
  /** Epoch ms. */
  at: number;
}

/**
 * How functions authenticate to a registered cluster (docs/operations.md, "Registering a
 * cluster"). Deployed functions accept only `secret` and `eks`: the record then holds no
 * credential, and each function reads its own secret. `kubeconfig` (credentials inline in
 * the table) and `kubeconfig-file` (a path on the operator's machine) are local only.
 */
export type ClusterCredentials =
  | { kind: 'kubeconfig'; kubeconfig: string; context?: string }
  /**
   * `npm start` only: a kubeconfig file on this machine, read when a client is built. A
   * function uses the context named after it when the file has one, else `context`, else
   * the file's current-context.
   */
  | { kind: 'kubeconfig-file'; path: string; context?: string }
  /**
   * Each function F reads the Secrets Manager secret `<CLUSTER_SECRET_PREFIX><cluster-id>/<F>`.
   * `secretArn` is the retired one-secret-for-all form: a record still holding it is refused
   * with a message saying how to migrate.
   */
  | { kind: 'secret'; secretArn?: string }
  | { kind: 'eks'; clusterName: string; region: string };


export interface ClusterRecord {
  id: string;
  /** Required: a record without one is refused wherever it is used (docs/operations.md, "Cluster modes"). */
  mode: ClusterMode;
  /**
   * The API server, as registered; shown by `cluster list` and the dashboard. No connection
   * uses it: a credential goes to the server stored with it (the kubeconfig, the secret's
   * `server`, EKS DescribeCluster's endpoint; record-connection.ts).
   */
  server: string;
  caData?: string;
  credentials: ClusterCredentials;
  /** OME's namespace in this cluster, where revisions live. */
  omeNamespace: string;
  /** The operator's labels (`env=prod`, `region=eu`), for choosing clusters by selector (shared/domain/fleet/cluster-labels.ts). */
  labels?: Record<string, string>;
}

export interface ClusterRegistry {
  getCluster(id: string): Promise<ClusterRecord | undefined>;
  listClusters(): Promise<ClusterRecord[]>;
  putCluster(record: ClusterRecord): Promise<void>;
}

/**
 * Fleet-wide state: sync waves (one record each) and the latest drift report per cluster.
 * A wave is written only conditionally on the version it was read at, so of two
 * invocations advancing the same wave one takes the step and the other sees ConflictError.
 */
export interface FleetStore {
  /** Stores a new wave (version 0); ConflictError when the id exists. */
  createWave(wave: SyncWave): Promise<void>;
  getWave(id: string): Promise<SyncWave | undefined>;
  /** Every stored wave, oldest first (ids sort by creation time). */
  listWaves(): Promise<SyncWave[]>;
  /**
   * Replaces the wave stored at `wave.version` with `wave` at `wave.version + 1`, which it
   * returns; ConflictError when the stored version is another (someone else wrote it).
   */
  saveWave(wave: SyncWave): Promise<SyncWave>;
  /** Replaces a cluster's drift report (last writer wins: each is a full observation). */
  putDriftReport(report: FleetDriftReport): Promise<void>;
  /** Every cluster's latest drift report, ordered by cluster id. */
  listDriftReports(): Promise<FleetDriftReport[]>;
  /** Creates or replaces a freeze window, by name (an operator's edit: last writer wins). */
  putFreezeWindow(window: FreezeWindow): Promise<void>;
  /** Every freeze window, ordered by name. */
  listFreezeWindows(): Promise<FreezeWindow[]>;
  /** Deletes a freeze window; false when none had that name. */
  deleteFreezeWindow(name: string): Promise<boolean>;
}

/**
 * Where a long piece of work (a drift fan-out, a GC sweep) left off when its invocation's
 * time ran out, so the next invocation resumes it (docs/architecture.md, "Continuations").
 * One record per cluster and piece of work; every write is conditional on the version it
 * was read at, so of two invocations resuming the same work one takes the step and the
 * other sees ConflictError.
 */
export interface Continuation {
  clusterId: string;
  /** Which work: `drift#<kind>/<namespace>/<name>` for a runtime's fan-out, `revision-gc` for the sweep. */
  work: string;
  /** What input the work is for (a hash of the runtime it fans out); newer input supersedes the record. */
  subject: string;
  /** The list page to resume with (a continue token), when the last one was cut short or ended. */
  pageToken?: string;
  /** Everything up to this key (`namespace/name`) is done: a relist after an expired token skips it. */
  after?: string;
  /** Pages or phases already done, for the work's own use (e.g. GC's plan time). */
  state?: Record<string, string | number | boolean>;
  /** Counts every write; 0 for a record not yet stored. */
  version: number;
  /** Epoch ms of the last write: a record not written for long belongs to a crashed invocation. */
  updatedAt: number;
}

export interface ContinuationStore {
  loadContinuation(clusterId: string, work: string): Promise<Continuation | undefined>;
  /**
   * Stores `continuation` if the stored one is still at `continuation.version` (0: none is
   * stored) and returns it at `version + 1`; ConflictError when another writer moved it.
   */
  saveContinuation(continuation: Continuation): Promise<Continuation>;
  /** Deletes the record if it is still at `version`; ConflictError when another writer moved it. */
  deleteContinuation(clusterId: string, work: string, version: number): Promise<void>;
}

/** The stores a process needs, over one backing table (or one in-memory state). */
export interface Stores {
  leases: LeaseStore;
  idempotency: IdempotencyStore;
  checkpoints: CheckpointStore;
  clusters: ClusterRegistry;
  fleet: FleetStore;
  continuations: ContinuationStore;
}
