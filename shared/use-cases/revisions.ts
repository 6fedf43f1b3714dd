/**
 * Runtime revisions (ControllerRevisions in OME's namespace) as pinning reads and writes
 * them: looked up by name, created when missing, and taken back from the garbage
 * collector before an InferenceService is pinned to them. Their data is never changed.
 */
import { AlreadyExistsError, ConflictError, NotFoundError } from '../domain/errors';
import { Resources } from '../domain/model/resources';
import type { ClusterClient, KubeObject } from '../ports/cluster';
import type { ControllerRevisionObject, StoredRevision } from '../domain/runtime';
import { Annotation, FIELD_MANAGER, Label } from '../domain/vocabulary';
import { listAll } from './list-all';

/** Revisions read so far, by name; `undefined` records one known not to exist. */
export class RevisionCache {
  private readonly byName = new Map<string, KubeObject | undefined>();

  constructor(
    private readonly client: ClusterClient,
    private readonly omeNamespace: string,
  ) {}

  /** Lists the revisions of the named runtimes in one paginated read. */
  async prefetchRuntimes(runtimeNames: Iterable<string>, pageSize: number): Promise<void> {
    const names = [...runtimeNames];
    if (names.length === 0) return;
    const labelSelector = `${Label.runtimeOf} in (${names.join(',')})`;
    for await (const page of listAll(this.client, Resources.controllerRevisions, { namespace: this.omeNamespace, labelSelector, pageSize })) {
      for (const revision of page) this.byName.set(revision.metadata.name, revision);
    }
  }

  /** Reads the named revisions not read yet, in parallel. */
  async load(names: Iterable<string>): Promise<void> {
    const wanted = [...new Set(names)].filter((name) => name !== '' && !this.byName.has(name));
    await Promise.all(wanted.map((name) => this.fetch(name)));
  }

  /** Reads one revision unless already known. */
  async fetch(name: string): Promise<KubeObject | undefined> {
    if (this.byName.has(name)) return this.byName.get(name);
    let revision: KubeObject | undefined;
    try {
      revision = await this.client.get<KubeObject>(Resources.controllerRevisions, this.omeNamespace, name);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    this.byName.set(name, revision);
    return revision;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get(name: string): KubeObject | undefined {
    return this.byName.get(name);
  }

  /** The decision's view: labels and data of a known revision. */
  readonly lookup = (name: string): StoredRevision | undefined => {
    const revision = this.byName.get(name);
    return revision ? { labels: revision.metadata.labels, data: revision.data } : undefined;
  };
}

/**
 * Creates a revision. AlreadyExists is success: identical specs share a revision, and the
 * existing one's data is never touched. Returns the stored revision and whether we made it.
 */
export async function createRevision(client: ClusterClient, revision: ControllerRevisionObject): Promise<{ revision: KubeObject; created: boolean }> {
  try {
    return { revision: await client.create<KubeObject>(Resources.controllerRevisions, revision, { fieldManager: FIELD_MANAGER }), created: true };
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error;
    const existing = await client.get<KubeObject>(Resources.controllerRevisions, revision.metadata.namespace, revision.metadata.name).catch((cause: unknown) => {
      // Deleted between our create and this read (GC): start the attempt over.
      if (cause instanceof NotFoundError) throw new ConflictError(`revision ${revision.metadata.name} vanished while being pinned`, { cause });
      throw cause;
    });
    return { revision: existing, created: false };
  }
}

/**
 * Removes the garbage collector's `ome.io/gc-eligible-since` mark before a pin uses the
 * revision. The merge patch carries the resourceVersion we read, so it fails (409) if the
 * revision changed meanwhile, and it moves the resourceVersion on, so a GC delete
 * preconditioned on the marked version fails instead of removing a revision in use. A
 * revision deleted meanwhile, or a lost race, is a ConflictError: the attempt starts over.
 */
export async function takeRevisionFromCollector(client: ClusterClient, revision: KubeObject): Promise<KubeObject> {
  if (revision.metadata.annotations?.[Annotation.gcEligibleSince] === undefined) return revision;
  const patch = { metadata: { resourceVersion: revision.metadata.resourceVersion, annotations: { [Annotation.gcEligibleSince]: null } } };
  try {
    return await client.patch<KubeObject>(Resources.controllerRevisions, revision.metadata.namespace, revision.metadata.name, patch, {
      type: 'merge',
      fieldManager: FIELD_MANAGER,
    });
  } catch (error) {
    if (error instanceof NotFoundError) throw new ConflictError(`revision ${revision.metadata.name} was deleted while being pinned`, { cause: error });
    throw error;
  }
}
