/**
 * What use-cases reach the plane through during an invocation: the configuration, the
 * clock, the stores and a client per registered cluster. The composition root
 * (`shared/app/context.ts`) builds it once per process; tests build it over memory stores.
 */
import type { ClusterMode } from '../domain/cluster-mode';
import type { Clock } from './clock';
import type { ClusterClient } from './cluster';
import type { ControlPlaneConfig } from './config';
import type { Stores } from './store';

export interface ClusterHandle {
  id: string;
  client: ClusterClient;
  /** OME's namespace in this cluster, where revisions live. */
  omeNamespace: string;
  /** Whether the plane controls the cluster or works beside upstream's controller (shared/domain/cluster-mode.ts). */
  mode: ClusterMode;
}

export interface AppContext {
  config: ControlPlaneConfig;
  clock: Clock;
  stores: Stores;
  /** The mode of a registered cluster, read from its record; NotFoundError or ClusterModeError as `cluster`. */
  clusterMode(clusterId: string): Promise<ClusterMode>;
  /** The client for a registered cluster; NotFoundError for an unknown id, ClusterModeError for a record without a mode. */
  cluster(clusterId: string): Promise<ClusterHandle>;
}
