/**
 * An in-memory stand-in for the plugin's narrow cluster client: objects by kind, namespace
 * and name; JSON Patch with `test` and `add`; resourceVersion bumps; injectable failures.
 */
import { ConflictError, InvalidInputError, NotFoundError } from '../../shared/domain/errors';
import type { KubeObject, ListOptions, ListPage, PatchOptions, ResourceType } from '../../shared/ports/cluster';
import type { CliClusterClient } from '../../cli/env';

type Op = { op: string; path: string; value?: unknown };

export class FakeCluster implements CliClusterClient {
  readonly objects = new Map<string, KubeObject>();
  readonly patches: Array<{ name: string; patch: Op[]; options: PatchOptions }> = [];
  /** Throw this from the next patch instead of applying it. */
  failNextPatch?: Error;
  /** Throw this from every get. */
  failGet?: Error;
  private version = 100;

  private key(type: ResourceType, namespace: string | undefined, name: string): string {
    return `${type.plural}/${namespace ?? ''}/${name}`;
  }

  put<T extends KubeObject>(type: ResourceType, object: T): T {
    const stored = structuredClone(object);
    stored.metadata.resourceVersion ??= String(++this.version);
    this.objects.set(this.key(type, stored.metadata.namespace, stored.metadata.name), stored);
    return stored;
  }

  async get<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T> {
    if (this.failGet) throw this.failGet;
    const found = this.objects.get(this.key(type, namespace, name));
    if (!found) throw new NotFoundError(`${type.plural} "${name}" not found`);
    return structuredClone(found) as T;
  }

  async list<T extends KubeObject>(type: ResourceType, options: ListOptions = {}): Promise<ListPage<T>> {
    const prefix = `${type.plural}/${options.namespace ?? ''}/`;
    const selector = parseSelector(options.labelSelector);
    const items = [...this.objects.entries()]
      .filter(([key]) => (options.namespace === undefined ? key.startsWith(`${type.plural}/`) : key.startsWith(prefix)))
      .map(([, object]) => object)
      .filter((object) => selector.every(([k, v]) => object.metadata.labels?.[k] === v));
    return { items: structuredClone(items) as T[], resourceVersion: String(this.version) };
  }

  async patch<T extends KubeObject>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    options: PatchOptions,
  ): Promise<T> {
    this.patches.push({ name, patch: patch as Op[], options });
    if (this.failNextPatch) {
      const error = this.failNextPatch;
      this.failNextPatch = undefined;
      throw error;
    }
    const key = this.key(type, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw new NotFoundError(`${type.plural} "${name}" not found`);
    const next = structuredClone(current) as unknown as Record<string, unknown>;
    for (const op of patch as Op[]) applyOp(next, op);
    const result = next as unknown as KubeObject;
    if (options.dryRun !== 'All') {
      result.metadata.resourceVersion = String(++this.version);
      this.objects.set(key, result);
    }
    return structuredClone(result) as T;
  }
}

function parseSelector(selector: string | undefined): Array<[string, string]> {
  if (!selector) return [];
  return selector.split(',').map((part) => part.split('=') as [string, string]);
}

function applyOp(target: Record<string, unknown>, op: Op): void {
  const parts = op.path.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = parts.pop() as string;
  let node: Record<string, unknown> = target;
  for (const part of parts) {
    const child = node[part];
    if (typeof child !== 'object' || child === null) throw new InvalidInputError(`path ${op.path} not found`);
    node = child as Record<string, unknown>;
  }
  if (op.op === 'test') {
    if (JSON.stringify(node[last]) !== JSON.stringify(op.value)) {
      throw new InvalidInputError('the server rejected our request due to an error in our request');
    }
    return;
  }
  if (op.op === 'add') {
    node[last] = structuredClone(op.value);
    return;
  }
  throw new ConflictError(`unsupported op ${op.op}`);
}
