/**
 * The bundle smoke check CI runs under Node 24 (`npm run smoke`), here under whichever Node
 * runs the tests (or `SMOKE_NODE`, a binary of another major): every function declared in
 * serverless.yml has a case, each bundle loads, answers its event as expected, and a wrong
 * runtime major is reported.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions, listFunctionEntries } from '../../scripts/build';
import { SMOKE_CASES, smokeBundles } from '../../scripts/smoke-bundles';

const node = process.env.SMOKE_NODE || process.execPath;

describe('Script: smoke-bundles', () => {
  let outDir: string;
  let declared: string[];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'ome-smoke-test-'));
    const entries = (await listFunctionEntries()).filter((entry) => entry.declared);
    declared = entries.map((entry) => entry.name);
    await buildFunctions(entries, outDir);
  }, 120_000);

  afterAll(async () => {
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('has a case for every function serverless.yml declares, and no other', () => {
    expect(Object.keys(SMOKE_CASES).sort()).toEqual([...declared].sort());
  });

  it('loads every bundle and gets the expected answer from each handler', async () => {
    // Act
    const results = await smokeBundles({ node, bundlesDir: outDir, names: declared });

    // Assess
    expect(results.map((result) => result.name).sort()).toEqual([...declared].sort());
    for (const result of results) expect(result.failure, result.name).toBeUndefined();
  }, 120_000);

  it('fails a bundle that runs under another major than the one expected', async () => {
    // Act
    const [result] = await smokeBundles({ node, bundlesDir: outDir, names: ['admission-webhook'], expectMajor: 1 });

    // Assess
    expect(result?.failure).toMatch(/^ran under Node \d+\.\d+\.\d+, expected major 1\n/);
  }, 60_000);

  it('fails a function without a case, and a folder without a bundle', async () => {
    // Act
    const results = await smokeBundles({ node, bundlesDir: join(outDir, 'missing'), names: ['no-such-function', 'pin'] });

    // Assess
    expect(results[0]?.failure).toMatch(/^no smoke case/);
    expect(results[1]?.failure).toMatch(/^the bundle did not load/);
  }, 60_000);
});
