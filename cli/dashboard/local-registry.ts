/**
 * Where `npm start` tells the CLI its table is: `<data-dir>/registry.json`, written once
 * the plane is ready and removed when it stops, so `kubectl ome dashboard` run from the
 * repository needs no flags. No imports: local/start.ts writes it.
 */
export const LOCAL_REGISTRY_FILE = 'registry.json';

export interface LocalRegistry {
  tableName?: string;
  endpoint?: string;
  region?: string;
}
