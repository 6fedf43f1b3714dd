/**
 * `npm run build`: bundles each function of serverless.yml (entry `functions/<name>/handler.ts`)
 * into `dist/functions/<name>/index.mjs`, with the same esbuild settings serverless-esbuild
 * uses when packaging (ESM for Lambda's Node 24, minified, source map, createRequire banner), and
 * prints each bundle's size. Exits non-zero on any error, a missing handler file included.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { BuildOptions } from 'esbuild';
import { parse as parseYaml } from 'yaml';

export const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * ESM bundles inline CommonJS code that calls `require` for node built-ins; ESM has no
 * `require`, so the bundle defines one (the banner serverless.yml gives serverless-esbuild).
 */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** The esbuild settings of a function bundle, shared with the benchmark's baselines. */
export const FUNCTION_BUILD_OPTIONS: BuildOptions = {
  bundle: true,
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  mainFields: ['module', 'main'],
  banner: { js: CREATE_REQUIRE_BANNER },
  logLevel: 'silent',
  legalComments: 'none',
};

export interface FunctionEntry {
  name: string;
  /** Absolute path of the handler module. */
  entry: string;
  /** Whether serverless.yml declares it (and so deploys it). */
  declared: boolean;
}

export interface BuiltBundle {
  name: string;
  file: string;
  bytes: number;
}

/**
 * The functions serverless.yml declares (their handler files may not exist yet), then any
 * `functions/<name>/handler.ts` it does not declare (`declared: false`).
 */
export async function listFunctionEntries(root = REPOSITORY_ROOT): Promise<FunctionEntry[]> {
  const doc = parseYaml(await readFile(join(root, 'serverless.yml'), 'utf8')) as { functions?: Record<string, { handler?: string }> };
  const entries: FunctionEntry[] = Object.entries(doc.functions ?? {}).map(([name, definition]) => {
    const handler = definition.handler ?? `functions/${name}/handler.handler`;
    const modulePath = handler.slice(0, handler.lastIndexOf('.'));
    return { name, entry: join(root, `${modulePath}.ts`), declared: true };
  });
  const functionsDir = join(root, 'functions');
  const onDisk = existsSync(functionsDir) ? await readdir(functionsDir) : [];
  for (const name of onDisk.sort()) {
    const entry = join(functionsDir, name, 'handler.ts');
    if (existsSync(entry) && !entries.some((fn) => fn.name === name)) entries.push({ name, entry, declared: false });
  }
  return entries;
}

/** Bundles one entry to `outfile` (ESM); resolves with its size in bytes. */
export async function bundle(entry: string, outfile: string, extra: BuildOptions = {}): Promise<number> {
  await mkdir(dirname(outfile), { recursive: true });
  await build({ ...FUNCTION_BUILD_OPTIONS, ...extra, entryPoints: [entry], outfile });
  return (await stat(outfile)).size;
}

/** Bundles every given function into `<outDir>/<name>/index.mjs`, in parallel. */
export async function buildFunctions(entries: FunctionEntry[], outDir: string): Promise<BuiltBundle[]> {
  return Promise.all(
    entries.map(async ({ name, entry }) => {
      const file = join(outDir, name, 'index.mjs');
      return { name, file, bytes: await bundle(entry, file) };
    }),
  );
}

export function formatKb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function describe(error: unknown): string {
  const errors = (error as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> }).errors;
  if (Array.isArray(errors) && errors.length > 0) {
    return errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text)).join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}

async function main(): Promise<number> {
  const outDir = join(REPOSITORY_ROOT, 'dist', 'functions');
  const entries = await listFunctionEntries();
  const missing = entries.filter((fn) => !existsSync(fn.entry));
  if (missing.length > 0) {
    for (const fn of missing) process.stderr.write(`build: ${fn.name}: ${relative(REPOSITORY_ROOT, fn.entry)} does not exist (serverless.yml names it)\n`);
    return 1;
  }
  for (const fn of entries.filter((entry) => !entry.declared)) {
    process.stderr.write(`build: ${fn.name}: not declared in serverless.yml, so built but not deployed\n`);
  }
  await rm(outDir, { recursive: true, force: true });
  const started = Date.now();
  let built: BuiltBundle[];
  try {
    built = await buildFunctions(entries, outDir);
  } catch (error) {
    process.stderr.write(`build failed:\n${describe(error)}\n`);
    return 1;
  }
  const width = Math.max(...built.map((b) => b.name.length));
  for (const b of built.sort((x, y) => x.name.localeCompare(y.name))) {
    process.stdout.write(`${b.name.padEnd(width)}  ${formatKb(b.bytes).padStart(10)}  ${relative(REPOSITORY_ROOT, b.file)}\n`);
  }
  process.stdout.write(`built ${built.length} functions in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`build failed: ${describe(error)}\n`);
      process.exitCode = 1;
    },
  );
}
