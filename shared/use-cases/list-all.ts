import type { ClusterClient, KubeObject } from '../ports/cluster';

/** Lists every object of a type, page by page. */
export async function* listAll<T extends KubeObject>(
  client: ClusterClient,
  type: Parameters<ClusterClient['list']>[0],
  options: { namespace?: string; labelSelector?: string; pageSize: number },
): AsyncGenerator<T[]> {
  let token: string | undefined;
  do {
    const page = await client.list<T>(type, {
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
      limit: options.pageSize,
      ...(token === undefined ? {} : { continue: token }),
    });
    yield page.items;
    token = page.continue || undefined;
  } while (token !== undefined);
}
