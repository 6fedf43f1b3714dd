/**
 * `npx tsx scripts/upstream-fields.ts <upstream-checkout> [--out FILE]`: regenerates
 * infra/crds/upstream/fields.json from a checkout of upstream OME (ome-projects/ome).
 *
 * It reads the CRDs controller-gen renders from upstream's Go types
 * (`config/crd/full/<file>`), lists every field under each kind's `roots` with the
 * descriptor the parity test compares, and records the checkout's commit. The kinds,
 * their CRD files, roots and deliberate exceptions are kept from the existing file, so a
 * regeneration changes only upstream's side. It needs no network; CI does not run it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { UPSTREAM_FIELDS_FILE } from '../infra/paths';
import type { JsonSchema } from '../local/cluster/schema';
import { listSchemaFields, type SchemaFieldList } from '../local/cluster/schema-fields';

export const USAGE = 'Usage: npx tsx scripts/upstream-fields.ts <path to an ome-projects/ome checkout> [--out FILE]';

/** Where upstream keeps its generated CRDs inside a checkout. */
export const UPSTREAM_CRD_FOLDER = 'config/crd/full';

export interface UpstreamException {
  path: string;
  /** `undeclared`: our CRD leaves the subtree to a parent that keeps unknown fields; `opaque`: our CRD declares it as an object that keeps unknown fields. */
  kind: 'undeclared' | 'opaque';
  reason: string;
}

export interface UpstreamKind {
  crd: string;
  roots: string[];
  fields: SchemaFieldList;
  exceptions: UpstreamException[];
}

export interface UpstreamFieldData {
  source: { repo: string; commit: string; files: string[]; [detail: string]: unknown };
  kinds: Record<string, UpstreamKind>;
}

interface CrdDocument {
  spec?: { versions?: Array<{ name?: string; storage?: boolean; schema?: { openAPIV3Schema?: JsonSchema } }> };
}

/** The storage version's schema of one CRD file. */
export function storageSchema(text: string, file: string): JsonSchema {
  const crd = parse(text) as CrdDocument;
  const version = crd.spec?.versions?.find((v) => v.storage) ?? crd.spec?.versions?.[0];
  const schema = version?.schema?.openAPIV3Schema;
  if (!schema) throw new Error(`${file}: no openAPIV3Schema in its storage version`);
  return schema;
}

/** The commit a checkout is at, or `unknown` when it is not a git work tree. */
function checkoutCommit(checkout: string): string {
  try {
    return execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * The field data for `checkout`: `previous` supplies the kinds, CRD files, roots and
 * exceptions; upstream's CRDs supply the fields and the source.
 */
export function regenerateUpstreamFields(previous: UpstreamFieldData, readCrd: (file: string) => string, commit: string): UpstreamFieldData {
  const kinds: Record<string, UpstreamKind> = {};
  for (const [kind, entry] of Object.entries(previous.kinds)) {
    const schema = storageSchema(readCrd(entry.crd), entry.crd);
    kinds[kind] = { ...entry, fields: listSchemaFields(schema, entry.roots) };
  }
  const files = Object.values(previous.kinds).map((entry) => `${UPSTREAM_CRD_FOLDER}/${entry.crd}`);
  return { source: { repo: previous.source.repo, commit, files: [...new Set(files)] }, kinds };
}

function main(argv: string[]): void {
  const { values, positionals } = parseArgs({ args: argv, options: { out: { type: 'string' } }, allowPositionals: true });
  const checkout = positionals[0];
  if (!checkout) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 1;
    return;
  }
  const out = resolve(values.out ?? UPSTREAM_FIELDS_FILE);
  const previous = JSON.parse(readFileSync(UPSTREAM_FIELDS_FILE, 'utf8')) as UpstreamFieldData;
  const data = regenerateUpstreamFields(previous, (file) => readFileSync(join(checkout, UPSTREAM_CRD_FOLDER, file), 'utf8'), checkoutCommit(checkout));
  writeFileSync(out, `${JSON.stringify(data, null, 2)}\n`);
  const counts = Object.entries(data.kinds).map(([kind, entry]) => `${kind} ${Object.keys(entry.fields).length}`);
  process.stdout.write(`wrote ${out} (${data.source.commit}): ${counts.join(', ')}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2));
