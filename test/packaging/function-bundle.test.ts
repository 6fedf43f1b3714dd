/**
 * A function bundle must not carry @kubernetes/client-node: functions connect to clusters
 * through record-connection.ts, and client-node (with tr46, whatwg-url, ws, js-yaml…) would
 * almost double every bundle and its cold start. One import of the kubernetes adapter's
 * index, or of kube-config.ts, from code a function reaches brings it back; this catches it.
 * Nor may it carry code from local/, a YAML library or Powertools (the functions have their
 * own reader and writers), nor canary analysis (the metrics executor, its network fence, the
 * CloudWatch and SigV4-signed metrics clients) unless it samples metrics: the others read
 * the metrics binding alone (shared/app/metrics-binding.ts). Every function's bundle, not
 * written to disk, in a few seconds.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { FUNCTION_BUILD_OPTIONS, REPOSITORY_ROOT } from '../../scripts/build';

const FUNCTIONS = readdirSync(join(REPOSITORY_ROOT, 'functions')).sort();

/** The functions that sample metrics for canary analysis. */
const SAMPLING_FUNCTIONS = ['rollout-run'];

/** The modules only sampling needs: the executor and its HTTP client, the fence, the AWS metrics clients, the judge. */
const ANALYSIS_ONLY = [
  /shared\/app\/analysis-wiring\.ts$/,
  /shared\/adapters\/prometheus\/(executor|client|pinned-fetch|errors)\.ts$/,
  /shared\/adapters\/aws-metrics\//,
  /shared\/domain\/analysis\/(network-fence|judge|query-result|cloudwatch-query|template|go-float)\.ts$/,
];

const inputs = new Map<string, Promise<string[]>>();

/** The modules of a function's bundle, built once per function. */
function inputsOf(name: string): Promise<string[]> {
  let built = inputs.get(name);
  if (!built) {
    built = build({
      ...FUNCTION_BUILD_OPTIONS,
      entryPoints: [join(REPOSITORY_ROOT, 'functions', name, 'handler.ts')],
      write: false,
      metafile: true,
      minify: false,
      sourcemap: false,
    }).then((result) => Object.keys(result.metafile.inputs));
    inputs.set(name, built);
  }
  return built;
}

describe('function bundles', () => {
  it.each(FUNCTIONS)('%s: no @kubernetes/client-node module is bundled', async (name) => {
    const modules = await inputsOf(name);
    expect(modules.some((input) => input.includes('shared/adapters/kubernetes/cluster-client.ts'))).toBe(true);
    expect(modules.filter((input) => input.includes('node_modules/@kubernetes/client-node'))).toEqual([]);
    // Code only the local stack runs (the local bus's pattern matcher, the embedded API
    // server) lives in local/ and must never reach a deployed function.
    expect(modules.filter((input) => /(^|\/)local\//.test(input))).toEqual([]);
  }, 60_000);

  it.each(FUNCTIONS)('%s: no YAML library and no Powertools is bundled', async (name) => {
    // Kubeconfigs and cluster secrets are read with shared/domain/yaml-subset.ts; the yaml
    // package (over 110 KB minified) serves the CLI and the local stack only. Log lines and
    // EMF metrics are written by shared/app/logger.ts and metrics.ts (docs/decisions.md, 24).
    const modules = await inputsOf(name);
    expect(modules.filter((input) => /node_modules\/(yaml|js-yaml|@aws-lambda-powertools)\//.test(input))).toEqual([]);
  }, 60_000);

  it.each(FUNCTIONS.filter((name) => !SAMPLING_FUNCTIONS.includes(name)))('%s: no canary analysis module is bundled', async (name) => {
    const modules = await inputsOf(name);
    expect(modules.filter((input) => ANALYSIS_ONLY.some((pattern) => pattern.test(input)))).toEqual([]);
  }, 60_000);

  it.each(SAMPLING_FUNCTIONS)('%s: bundles the analysis executor it samples with', async (name) => {
    const modules = await inputsOf(name);
    // Each pattern must match something here, or the check above would pass for any bundle.
    for (const pattern of ANALYSIS_ONLY) expect(modules.some((input) => pattern.test(input)), String(pattern)).toBe(true);
  }, 60_000);
});
