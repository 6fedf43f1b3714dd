/**
 * A function bundle must not carry @kubernetes/client-node: functions connect to clusters
 * through record-connection.ts, and client-node (with tr46, whatwg-url, ws, js-yaml…) would
 * almost double every bundle and its cold start. One import of the kubernetes adapter's
 * index, or of kube-config.ts, from code a function reaches brings it back; this catches it.
 * Nor may it carry code from local/. Every function's bundle, not written to disk, in a few seconds.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { FUNCTION_BUILD_OPTIONS, REPOSITORY_ROOT } from '../../scripts/build';

const FUNCTIONS = readdirSync(join(REPOSITORY_ROOT, 'functions')).sort();

describe('function bundles', () => {
  it.each(FUNCTIONS)('%s: no @kubernetes/client-node module is bundled', async (name) => {
    const result = await build({
      ...FUNCTION_BUILD_OPTIONS,
      entryPoints: [join(REPOSITORY_ROOT, 'functions', name, 'handler.ts')],
      write: false,
      metafile: true,
      minify: false,
      sourcemap: false,
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('shared/adapters/kubernetes/cluster-client.ts'))).toBe(true);
    expect(inputs.filter((input) => input.includes('node_modules/@kubernetes/client-node'))).toEqual([]);
    // Code only the local stack runs (the local bus's pattern matcher, the embedded API
    // server) lives in local/ and must never reach a deployed function.
    expect(inputs.filter((input) => /(^|\/)local\//.test(input))).toEqual([]);
  }, 60_000);
});
