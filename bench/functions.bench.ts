/**
 * Function bundles: each function's size and cold-load time (a fresh `node` process that
 * imports the bundle, median of several), beside a baseline bundle built in the same run
 * that only imports the AWS SDK clients the function's bundle contains. The difference is
 * what our code, middy, Powertools and the Kubernetes client add to a cold start.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { FUNCTION_BUILD_OPTIONS, REPOSITORY_ROOT, bundle, listFunctionEntries } from '../scripts/build';
import { benchSize, compare } from './harness';
import type { BenchResult, BenchSuite } from './harness';

const execFileAsync = promisify(execFile);

const OUT_DIR = join(REPOSITORY_ROOT, '.bench', 'functions');
const SAMPLES = benchSize(5, 1);

/** The client class each SDK package's baseline imports; other packages are imported whole. */
const CLIENT_EXPORTS: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'DynamoDBClient',
  '@aws-sdk/lib-dynamodb': 'DynamoDBDocumentClient',
  '@aws-sdk/client-eventbridge': 'EventBridgeClient',
  '@aws-sdk/client-secrets-manager': 'SecretsManagerClient',
  '@aws-sdk/client-eks': 'EKSClient',
  '@aws-sdk/client-sts': 'STSClient',
  '@aws-sdk/client-sqs': 'SQSClient',
};

/** The AWS SDK client packages (`client-*`, `lib-*`) a function's bundle contains, from esbuild's metafile. */
async function sdkClientsOf(entry: string): Promise<string[]> {
  const result = await build({ ...FUNCTION_BUILD_OPTIONS, entryPoints: [entry], write: false, metafile: true, minify: false, sourcemap: false });
  const packages = new Set<string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /node_modules\/(@aws-sdk\/(?:client|lib)-[^/]+)\//.exec(input);
    if (match?.[1]) packages.add(match[1]);
  }
  return [...packages].sort();
}

function baselineSource(packages: string[]): string {
  return packages
    .map((pkg, index) => {
      const name = CLIENT_EXPORTS[pkg];
      return name ? `export { ${name} } from '${pkg}';` : `export * as sdk${index} from '${pkg}';`;
    })
    .join('\n');
}

/** Wall time of a fresh node process (with `nodeArgs`) that imports `file` and exits. */
async function coldLoadMs(file: string, nodeArgs: readonly string[] = []): Promise<number> {
  const script = `await import(${JSON.stringify(pathToFileURL(file).href)});`;
  const times: number[] = [];
  // One unmeasured run brings the file into the page cache.
  for (let i = 0; i <= SAMPLES; i += 1) {
    const start = process.hrtime.bigint();
    await execFileAsync(process.execPath, [...nodeArgs, '--no-warnings', '--input-type=module', '-e', script], { cwd: REPOSITORY_ROOT, timeout: 60_000 });
    if (i > 0) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

const kb = (bytes: number): number => Math.round((bytes / 1024) * 10) / 10;

const suite: BenchSuite = {
  name: 'functions',
  async run(): Promise<BenchResult[]> {
    await rm(OUT_DIR, { recursive: true, force: true });
    const entries = (await listFunctionEntries()).filter((fn) => existsSync(fn.entry));
    const results: BenchResult[] = [];
    for (const fn of entries) {
      const file = join(OUT_DIR, fn.name, 'index.mjs');
      const bytes = await bundle(fn.entry, file);
      const packages = await sdkClientsOf(fn.entry);
      const baselineEntry = join(OUT_DIR, fn.name, 'baseline-entry.mjs');
      await mkdir(join(OUT_DIR, fn.name), { recursive: true });
      await writeFile(baselineEntry, `${baselineSource(packages)}\n`);
      const baselineFile = join(OUT_DIR, fn.name, 'baseline.mjs');
      const baselineBytes = await bundle(baselineEntry, baselineFile);
      const baselineName = packages.map((pkg) => pkg.replace('@aws-sdk/', '')).join(' + ') || 'no SDK';

      // Interleaved, so load on the machine weighs on both alike.
      const baselineMs = await coldLoadMs(baselineFile);
      const loadMs = await coldLoadMs(file);
      // What the deployed NODE_OPTIONS=--enable-source-maps costs at load, on the same bundle and its map.
      const withMapsMs = await coldLoadMs(file, ['--enable-source-maps']);
      const mapBytes = (await stat(`${file}.map`)).size;
      results.push(
        compare('functions', { name: `${fn.name} bundle`, value: kb(bytes), unit: 'KB' }, { name: baselineName, value: kb(baselineBytes), unit: 'KB' }, relative(REPOSITORY_ROOT, file)),
        compare('functions', { name: `${fn.name} cold load`, value: loadMs, unit: 'ms' }, { name: baselineName, value: baselineMs, unit: 'ms' }, `median of ${SAMPLES} fresh node processes`),
        compare(
          'functions',
          { name: `${fn.name} cold load, --enable-source-maps`, value: withMapsMs, unit: 'ms' },
          { name: 'the same bundle without', value: loadMs, unit: 'ms' },
          `source map ${kb(mapBytes)} KB beside the bundle`,
        ),
      );
    }
    return results;
  },
};

export default suite;
