/**
 * Lambda's runtime and the bundles' esbuild target name the same Node major everywhere they
 * are set, and that major is one Lambda still supports (nodejs20.x was deprecated on
 * 2026-04-30). Read from serverless.yml directly, no packaging.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FUNCTION_BUILD_OPTIONS, REPOSITORY_ROOT } from '../../scripts/build';

interface ServerlessFile {
  provider: { runtime?: string };
  custom: { esbuild: Record<string, unknown> & { target?: string } };
  functions: Record<string, { runtime?: string }>;
}

const LAMBDA_RUNTIME = 'nodejs24.x';
const ESBUILD_TARGET = 'node24';

describe('Lambda runtime', () => {
  it('runs every function on nodejs24.x', async () => {
    // Prepare
    const file = parseYaml(await readFile(join(REPOSITORY_ROOT, 'serverless.yml'), 'utf8')) as ServerlessFile;

    // Assess: the provider's runtime, and no function overriding it.
    expect(file.provider.runtime).toBe(LAMBDA_RUNTIME);
    for (const [name, definition] of Object.entries(file.functions)) expect(definition.runtime ?? LAMBDA_RUNTIME, name).toBe(LAMBDA_RUNTIME);
  });

  it('bundles for the same Node major in serverless.yml and in scripts/build.ts', async () => {
    const file = parseYaml(await readFile(join(REPOSITORY_ROOT, 'serverless.yml'), 'utf8')) as ServerlessFile;
    expect(file.custom.esbuild.target).toBe(ESBUILD_TARGET);
    expect(FUNCTION_BUILD_OPTIONS.target).toBe(ESBUILD_TARGET);
  });

  it('deploys the bundles the benchmark measures: minified, source maps without the sources', async () => {
    const file = parseYaml(await readFile(join(REPOSITORY_ROOT, 'serverless.yml'), 'utf8')) as ServerlessFile;
    for (const option of ['bundle', 'minify', 'sourcemap', 'sourcesContent', 'format', 'platform', 'target'] as const) {
      expect(file.custom.esbuild[option], option).toBe(FUNCTION_BUILD_OPTIONS[option]);
    }
    // Stack traces name our files and lines; the code itself stays out of the zip.
    expect(FUNCTION_BUILD_OPTIONS.sourcemap).toBe(true);
    expect(FUNCTION_BUILD_OPTIONS.sourcesContent).toBe(false);
  });
});
