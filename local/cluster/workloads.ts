/**
 * What the deployment controller and kubelets would report: after a short delay, a
 * Deployment's status shows every desired replica updated, ready and available for
 * its current generation, so rollouts progress on a cluster without nodes.
 */
import { storageKey, type KubeObject, type ResourceDef } from './registry';
import type { ObjectStore } from './store';

/**
 * What the simulator needs of the API server (ClusterApi, which starts it): the stored
 * objects, and a status write made as the server's own controllers make theirs.
 */
export interface DeploymentStatusWriter {
  readonly store: Pick<ObjectStore, 'get'>;
  update(def: ResourceDef, namespace: string | undefined, name: string, body: unknown, subresource: string, options: { internal: boolean }): Promise<unknown>;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function nowText(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Deployment status as the controller writes it; zero counts are omitted (omitempty). */
export function readyDeploymentStatus(deployment: KubeObject, previous: unknown): Record<string, unknown> {
  const spec = record(deployment.spec);
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const now = nowText();
  const status: Record<string, unknown> = { observedGeneration: deployment.metadata.generation ?? 1 };
  if (replicas > 0) {
    status.replicas = replicas;
    status.updatedReplicas = replicas;
    status.readyReplicas = replicas;
    status.availableReplicas = replicas;
  }
  const oldConditions = Array.isArray(record(previous).conditions) ? (record(previous).conditions as Array<Record<string, unknown>>) : [];
  const since = (type: string): string => {
    const old = oldConditions.find((c) => c.type === type && c.status === 'True');
    return typeof old?.lastTransitionTime === 'string' ? old.lastTransitionTime : now;
  };
  const name = deployment.metadata.name ?? '';
  status.conditions = [
    {
      type: 'Available', status: 'True', lastUpdateTime: now, lastTransitionTime: since('Available'),
      reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.',
    },
    {
      type: 'Progressing', status: 'True', lastUpdateTime: now, lastTransitionTime: since('Progressing'),
      reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${name}-${(deployment.metadata.uid ?? '').slice(0, 10)}" has successfully progressed.`,
    },
  ];
  return status;
}

export class DeploymentSimulator {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly api: DeploymentStatusWriter,
    private readonly delayMs: number,
  ) {}

  /** Called after every committed Deployment write; acts when the generation is new. */
  observe(def: ResourceDef, deployment: KubeObject, previous: KubeObject | undefined): void {
    if (this.stopped || deployment.metadata.deletionTimestamp) return;
    const generation = deployment.metadata.generation ?? 1;
    if (previous && previous.metadata.generation === generation) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.report(def, deployment, generation);
    }, this.delayMs);
    this.timers.add(timer);
  }

  private async report(def: ResourceDef, deployment: KubeObject, generation: number): Promise<void> {
    if (this.stopped) return;
    const namespace = deployment.metadata.namespace;
    const name = deployment.metadata.name ?? '';
    const latest = this.api.store.get(storageKey(def), namespace, name);
    if (!latest || latest.metadata.generation !== generation || latest.metadata.uid !== deployment.metadata.uid) return;
    const body = { ...latest, status: readyDeploymentStatus(latest, latest.status) };
    await this.api.update(def, namespace, name, body, 'status', { internal: true }).catch(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
