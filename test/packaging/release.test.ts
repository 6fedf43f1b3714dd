/**
 * `npm run release`: the tarball unpacked into an empty directory runs with Node alone, as
 * `kubectl-ome` and through the real kubectl, completes through kubectl's plugin completion,
 * and the krew manifest names it by its sha256.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

import { readPackageVersion } from '../../cli/build-info';
import { KREW_API_VERSION } from '../../scripts/krew-manifest';
import { buildRelease, installExcerpt, type Release } from '../../scripts/release';
import { REPOSITORY_ROOT } from '../../scripts/build';
import { createTarGz } from '../../scripts/tarball';

const run = promisify(execFile);

let work: string;
let release: Release;
let bin: string;
let cleanEnv: Record<string, string>;

async function which(command: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', `command -v ${command}`]);
  return dirname(stdout.trim());
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ome-release-'));
  release = await buildRelease({ root: REPOSITORY_ROOT, outDir: join(work, 'out'), baseUrl: 'https://downloads.example.test/ome/v1' });
  // Unpacked far from the repository, with no node_modules on any path Node searches.
  bin = join(work, 'plugin', 'bin');
  await run('mkdir', ['-p', bin]);
  await run('tar', ['-xzf', release.tarball, '-C', bin]);
  const path = [bin, dirname(process.execPath), await which('kubectl'), '/usr/bin', '/bin'].join(delimiter);
  cleanEnv = { PATH: path, HOME: join(work, 'plugin'), NODE_PATH: '' };
}, 120_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('npm run release', () => {
  it('packs the plugin, its completion entry and the install notes', async () => {
    expect((await readdir(bin)).sort()).toEqual(['README.md', 'kubectl-ome', 'kubectl_complete-ome']);
    expect((await stat(join(bin, 'kubectl-ome'))).mode & 0o111).toBe(0o111);
    expect(await readFile(join(bin, 'README.md'), 'utf8')).toContain('## Install the plugin');
    expect(release.tarball.endsWith(`kubectl-ome-${readPackageVersion(REPOSITORY_ROOT)}.tar.gz`)).toBe(true);
  });

  it('runs kubectl-ome version with Node alone', async () => {
    const { stdout } = await run(join(bin, 'kubectl-ome'), ['version', '-o', 'json'], { env: cleanEnv, cwd: work });
    const report = JSON.parse(stdout) as { pluginVersion: string; gitCommit: string; nodeVersion: string };
    expect(report).toEqual({ pluginVersion: `v${release.version}`, gitCommit: release.commit, nodeVersion: process.version });
    expect(release.commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
  });

  it('runs as kubectl ome through the real kubectl', async () => {
    const { stdout } = await run('kubectl', ['ome', 'version'], { env: cleanEnv, cwd: work });
    expect(stdout).toBe(`Plugin Version: v${release.version}\nGit Commit: ${release.commit}\nNode Version: ${process.version}\n`);
  });

  it('completes through kubectl_complete-ome', async () => {
    const words = await run('kubectl', ['__complete', 'ome', 'runtime', 's'], { env: cleanEnv, cwd: work });
    expect(words.stdout).toBe('sync\nshow\n:4\n');
    const values = await run('kubectl', ['__complete', 'ome', 'rollout', 'repin', 'chat', '--dry-run', ''], { env: cleanEnv, cwd: work });
    expect(values.stdout).toBe('none\nclient\nserver\n:4\n');
  });

  it('carries the manifests admin cluster register installs', async () => {
    const result = await run(join(bin, 'kubectl-ome'), ['admin', 'cluster', 'register', 'edge-1', '--mode', 'standalone', '--credentials', 'secret', '--skip-webhook'], {
      env: cleanEnv,
      cwd: work,
    }).catch((error: { code: number; stderr: string }) => error);
    // It reads its manifests, then stops at the registry no flag names: no repository needed.
    expect(result.stderr).toBe('error: the registry table is unknown: pass --table or set TABLE_NAME\n');
  });

  it('writes a krew manifest naming the tarball by its sha256', async () => {
    const manifest = parseYaml(await readFile(release.manifest, 'utf8')) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: { version: string; platforms: Array<{ uri: string; sha256: string; bin: string; files: Array<{ from: string }> }> };
    };
    expect(manifest.apiVersion).toBe(KREW_API_VERSION);
    expect(manifest.kind).toBe('Plugin');
    expect(manifest.metadata.name).toBe('ome');
    expect(manifest.spec.version).toBe(`v${release.version}`);
    const sha256 = createHash('sha256').update(await readFile(release.tarball)).digest('hex');
    for (const platform of manifest.spec.platforms) {
      expect(platform.sha256).toBe(sha256);
      expect(platform.bin).toBe('kubectl-ome');
      expect(platform.uri).toBe(`https://downloads.example.test/ome/v1/kubectl-ome-${release.version}.tar.gz`);
      expect(platform.files.map((file) => file.from)).toContain('kubectl_complete-ome');
    }
  });
});

describe('tarball', () => {
  it('is the same bytes for the same files', () => {
    const entries = [{ name: 'a', mode: 0o755, content: Buffer.from('#!/bin/sh\n') }];
    expect(createTarGz(entries, 1_700_000_000).equals(createTarGz(entries, 1_700_000_000))).toBe(true);
  });

  it('takes the README install section up to the next heading', () => {
    const readme = '# Title\n\nintro\n\n## Install the plugin\n\nunpack it\n\n## Architecture\n\nmore\n';
    expect(installExcerpt(readme, '1.2.3')).toBe('# kubectl ome v1.2.3\n\n## Install the plugin\n\nunpack it\n');
  });
});
