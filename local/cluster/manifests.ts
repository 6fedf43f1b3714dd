/**
 * Loads YAML manifests (one or many documents per file) into the server at start, the
 * way `kubectl apply -f DIR` would: CRDs from `infra/crds/` so the project's kinds are
 * served before anything else talks to the cluster, then the access manifests of
 * `infra/k8s/` (ServiceAccounts, roles, bindings, admission policies).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ClusterApi } from './api';
import type { KubeObject } from './registry';

/** Parses every document of a YAML text, skipping empty ones. */
export function parseManifests(text: string, source: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`${source}: ${document.errors[0]?.message ?? 'invalid YAML'}`);
    const value = document.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${source}: a manifest must be a mapping`);
    const object = value as KubeObject;
    if (object.kind === 'List' && Array.isArray(object.items)) objects.push(...(object.items as KubeObject[]));
    else objects.push(object);
  }
  return objects;
}

/**
 * Applies every `*.yaml`/`*.yml`/`*.json` file of `dir` (those `include` accepts) in name
 * order; a missing directory applies nothing. Resolves with the objects applied.
 */
export async function applyManifestDirectory(api: ClusterApi, dir: string, include: (fileName: string) => boolean = () => true): Promise<KubeObject[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.(ya?ml|json)$/.test(n) && include(n)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const applied: KubeObject[] = [];
  for (const name of names) {
    const path = join(dir, name);
    for (const object of parseManifests(await readFile(path, 'utf8'), path)) {
      try {
        await api.applyInternal(object);
      } catch (error) {
        throw new Error(`${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      applied.push(object);
    }
  }
  return applied;
}
