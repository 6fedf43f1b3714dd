/**
 * The shape every Kubernetes object shares, and where a kind is served: what the pure rules
 * read and the cluster port (`shared/ports/cluster.ts`) carries.
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Where a kind is served: enough to build its REST path. */
export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Lower-case plural used in paths, e.g. `inferenceservices`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
