import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ClusterApi } from '../../local/cluster/api';

/** `Math.random` values that draw these suffix characters, one a call (the alphabet of kube-apiserver's names). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const draws = (suffixes: string[]): number[] => suffixes.flatMap((suffix) => [...suffix].map((char) => (ALPHABET.indexOf(char) + 0.5) / ALPHABET.length));

describe('ClusterApi: names from generateName', () => {
  let api: ClusterApi;
  const configMaps = () => api.resolve('', 'v1', 'configmaps');
  const create = () => api.create(configMaps(), 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'storm.' } });

  beforeEach(async () => {
    api = new ClusterApi({ watchWindow: 100, bookmarkIntervalMs: 60_000, workloadReadyDelayMs: 60_000 });
    await api.bootstrapNamespaces(['default']);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    api.stop();
  });

  it('draws again when the generated name is taken, as kube-apiserver does (RetryGenerateName)', async () => {
    const random = vi.spyOn(Math, 'random');
    for (const value of draws(['bbbbb', 'bbbbb', 'bbbbb', 'ccccc'])) random.mockReturnValueOnce(value);
    const first = await create();
    const second = await create();
    expect([first.object.metadata.name, second.object.metadata.name]).toEqual(['storm.bbbbb', 'storm.ccccc']);
  });

  it('gives up after eight taken draws with AlreadyExists', async () => {
    const random = vi.spyOn(Math, 'random');
    for (const value of draws(Array.from({ length: 9 }, () => 'ddddd'))) random.mockReturnValueOnce(value);
    await create();
    const refused = await create().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: { code: 409, reason: 'AlreadyExists' } });
  });
});
