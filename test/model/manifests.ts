import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CLUSTER_MANIFEST_DIRECTORY, CRD_DIRECTORY } from '../../infra/paths';

export type Manifest = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/** Every document of every YAML file in infra/<folder>, by file name; throws on a YAML error. */
export function readManifests(folder: 'crds' | 'k8s'): Map<string, Manifest[]> {
  const directory = folder === 'crds' ? CRD_DIRECTORY : CLUSTER_MANIFEST_DIRECTORY;
  const files = new Map<string, Manifest[]>();
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.yaml')).sort()) {
    const documents = parseAllDocuments(readFileSync(join(directory, file), 'utf8'));
    for (const document of documents) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((error) => error.message).join('; ')}`);
    }
    files.set(file, documents.map((document) => document.toJS() as Manifest).filter(Boolean));
  }
  return files;
}
