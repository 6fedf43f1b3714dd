/**
 * What the server serves: one `ResourceDef` per group/version/resource, built in or
 * defined by a CustomResourceDefinition. Lookups by path segment (plural), kind and
 * short name feed routing, discovery and the in-process client.
 */
import type { JsonSchema } from './schema';
import type { StrategicMergeKeys } from './patch';

export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
    [key: string]: unknown;
  };
  [field: string]: unknown;
};

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** A built-in table: column definitions plus a function producing each row's cells. */
export interface BuiltinTable {
  columns: Array<Omit<PrinterColumn, 'jsonPath'>>;
  cells(object: KubeObject, now: number): unknown[];
}

export interface ResourceDef {
  /** '' for core. */
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  statusSubresource: boolean;
  /** Whether writes keep `metadata.generation` (kinds with a spec). */
  tracksGeneration: boolean;
  /** Whether PUT without `metadata.resourceVersion` is allowed (built-ins yes, custom resources no). */
  allowUnconditionalUpdate: boolean;
  /** Merge keys for strategic merge patch; absent for custom resources, which refuse it (415). */
  strategicMergeKeys?: StrategicMergeKeys;
  /** Field selector labels beyond metadata.name/metadata.namespace, with how to read them. */
  extraFields?: Record<string, (object: KubeObject) => string>;
  builtinTable?: BuiltinTable;
  printerColumns?: PrinterColumn[];
  /** The structural schema of a custom resource version. */
  schema?: JsonSchema;
  /** Name of the CRD that defines it. */
  crdName?: string;
}

export function groupVersion(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

/** Storage is per group and resource, shared by every served version. */
export function storageKey(def: Pick<ResourceDef, 'group' | 'plural'>): string {
  return `${def.group}/${def.plural}`;
}

export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceDef>();

  add(def: ResourceDef): void {
    this.byPath.set(`${def.group}/${def.version}/${def.plural}`, def);
  }

  removeCrd(crdName: string): ResourceDef[] {
    const removed: ResourceDef[] = [];
    for (const [key, def] of this.byPath) {
      if (def.crdName === crdName) {
        this.byPath.delete(key);
        removed.push(def);
      }
    }
    return removed;
  }

  lookup(group: string, version: string, plural: string): ResourceDef | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  all(): ResourceDef[] {
    return [...this.byPath.values()];
  }

  /** Served group versions, core first, then groups in registration order. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const def of this.byPath.values()) {
      const versions = groups.get(def.group) ?? [];
      if (!versions.includes(def.version)) versions.push(def.version);
      groups.set(def.group, versions);
    }
    return groups;
  }

  inGroupVersion(group: string, version: string): ResourceDef[] {
    return this.all().filter((d) => d.group === group && d.version === version);
  }

  byKind(group: string, kind: string): ResourceDef | undefined {
    return this.all().find((d) => d.group === group && d.kind === kind);
  }
}
