/**
 * In-memory stores with the DynamoDB stores' semantics, for unit tests and single-process
 * runs. Every check-and-write happens within one synchronous step, which is what a
 * conditional write gives in DynamoDB. Values are copied in and out, as a network would.
 */
import { ConflictError, LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { FleetDriftReport } from '../../domain/fleet/fleet-drift';
import type { SyncWave } from '../../domain/fleet/sync-wave';
import type { FreezeWindow } from '../../domain/fleet/freeze-window';
import { MemoryIdempotencyStore } from './idempotency-store';
import { MemoryLeaseStore } from './lease-store';
import type {
  CheckpointStore,
  Checkpoints,
  ForwarderError,
  FleetStore,
  ClusterRecord,
  ClusterRegistry,
  Continuation,
  ContinuationStore,
  Lease,
  Stores,
} from '../../ports/store';

export { MemoryIdempotencyStore } from './idempotency-store';
export { MemoryLeaseStore } from './lease-store';

export class MemoryCheckpointStore implements CheckpointStore {
  private readonly checkpoints = new Map<string, Checkpoints>();
  private readonly errors = new Map<string, ForwarderError>();

  constructor(private readonly clock: Clock = systemClock) {}

  async recordForwarderError(clusterId: string, message: string): Promise<void> {
    this.errors.set(clusterId, { message, at: this.clock.now() });
  }

  async loadForwarderError(clusterId: string): Promise<ForwarderError | undefined> {
    return this.errors.get(clusterId);
  }

  async loadCheckpoints(clusterId: string): Promise<Checkpoints> {
    return { ...this.checkpoints.get(clusterId) };
  }

  async saveCheckpoints(clusterId: string, checkpoints: Checkpoints, lease: Lease): Promise<void> {
    // Fenced by the lease's expiry, as the DynamoDB store's batches are.
    if (lease.expiresAt <= this.clock.now()) {
      throw new LeaseLostError(`checkpoints of ${clusterId} not saved: lease ${lease.key} token ${lease.fencingToken} expired before the write`);
    }
    this.checkpoints.set(clusterId, { ...checkpoints });
  }
}

export class MemoryClusterRegistry implements ClusterRegistry {
  private readonly clusters = new Map<string, ClusterRecord>();

  async getCluster(id: string): Promise<ClusterRecord | undefined> {
    const record = this.clusters.get(id);
    return record === undefined ? undefined : structuredClone(record);
  }

  /** Every registered cluster, ordered by id. */
  async listClusters(): Promise<ClusterRecord[]> {
    return [...this.clusters.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, record]) => structuredClone(record));
  }

  async putCluster(record: ClusterRecord): Promise<void> {
    this.clusters.set(record.id, structuredClone(record));
  }
}

const byKey = <T>(entries: Map<string, T>): T[] =>
  [...entries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => structuredClone(value));

export class MemoryFleetStore implements FleetStore {
  private readonly waves = new Map<string, SyncWave>();
  private readonly reports = new Map<string, FleetDriftReport>();
  private readonly freezeWindows = new Map<string, FreezeWindow>();

  async createWave(wave: SyncWave): Promise<void> {
    if (this.waves.has(wave.id)) throw new ConflictError(`sync wave ${wave.id} already exists`);
    this.waves.set(wave.id, structuredClone({ ...wave, version: 0 }));
  }

  async getWave(id: string): Promise<SyncWave | undefined> {
    const wave = this.waves.get(id);
    return wave === undefined ? undefined : structuredClone(wave);
  }

  async listWaves(): Promise<SyncWave[]> {
    return byKey(this.waves);
  }

  async saveWave(wave: SyncWave): Promise<SyncWave> {
    const stored = this.waves.get(wave.id);
    if (stored === undefined || stored.version !== wave.version) {
      throw new ConflictError(`sync wave ${wave.id} changed since version ${wave.version} was read`);
    }
    const saved = { ...structuredClone(wave), version: wave.version + 1 };
    this.waves.set(wave.id, saved);
    return structuredClone(saved);
  }

  async putDriftReport(report: FleetDriftReport): Promise<void> {
    this.reports.set(report.clusterId, structuredClone(report));
  }

  async listDriftReports(): Promise<FleetDriftReport[]> {
    return byKey(this.reports);
  }

  async putFreezeWindow(window: FreezeWindow): Promise<void> {
    this.freezeWindows.set(window.name, structuredClone(window));
  }

  async listFreezeWindows(): Promise<FreezeWindow[]> {
    return byKey(this.freezeWindows);
  }

  async deleteFreezeWindow(name: string): Promise<boolean> {
    return this.freezeWindows.delete(name);
  }
}

export class MemoryContinuationStore implements ContinuationStore {
  private readonly records = new Map<string, Continuation>();

  async loadContinuation(clusterId: string, work: string): Promise<Continuation | undefined> {
    const stored = this.records.get(`${clusterId}\0${work}`);
    return stored === undefined ? undefined : structuredClone(stored);
  }

  async saveContinuation(continuation: Continuation): Promise<Continuation> {
    const id = `${continuation.clusterId}\0${continuation.work}`;
    if ((this.records.get(id)?.version ?? 0) !== continuation.version) {
      throw new ConflictError(`continuation ${continuation.work} of cluster ${continuation.clusterId} moved since version ${continuation.version} was read`);
    }
    const saved = { ...structuredClone(continuation), version: continuation.version + 1 };
    this.records.set(id, saved);
    return structuredClone(saved);
  }

  async deleteContinuation(clusterId: string, work: string, version: number): Promise<void> {
    const id = `${clusterId}\0${work}`;
    if ((this.records.get(id)?.version ?? 0) !== version) {
      throw new ConflictError(`continuation ${work} of cluster ${clusterId} moved since version ${version} was read`);
    }
    this.records.delete(id);
  }
}

/** All in-memory stores sharing one clock. */
export function createMemoryStores(clock: Clock = systemClock): Stores {
  return {
    leases: new MemoryLeaseStore(clock),
    idempotency: new MemoryIdempotencyStore(clock),
    checkpoints: new MemoryCheckpointStore(clock),
    clusters: new MemoryClusterRegistry(),
    fleet: new MemoryFleetStore(),
    continuations: new MemoryContinuationStore(),
  };
}
