/**
 * `npm run release`: the plugin as a release.
 *
 * - `kubectl-ome`: cli/ bundled by esbuild into one ESM file with a Node shebang, the version,
 *   commit and the manifests `admin cluster register` installs baked in; it needs Node.js
 *   alone (no node_modules, no build at run time).
 * - `kubectl_complete-ome`: the completion entry kubectl runs (bin/kubectl_complete-ome).
 * - `README.md`: the README's "Install the plugin" section; `LICENSE` when the tree has one.
 *
 * Writes `<out>/kubectl-ome-<version>.tar.gz` and the krew manifest `<out>/ome.yaml` that
 * names it by URI and sha256. Options: `--out-dir DIR` (default dist/release), `--base-url
 * URL` where the tarball will be published (default $RELEASE_BASE_URL, else a file:// URL
 * of the output directory, which `kubectl krew install --manifest=… --archive=…` accepts).
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

import { readOnboardingFiles } from '../cli/admin/cluster-manifests';
import { readGitCommit, readPackageVersion, type BuildInfo } from '../cli/build-info';
import { CREATE_REQUIRE_BANNER, REPOSITORY_ROOT } from './build';
import { buildKrewManifest, formatKrewManifest } from './krew-manifest';
import { createTarGz, type TarEntry } from './tarball';

export const INSTALL_SECTION = '## Install the plugin';

export interface ReleaseOptions {
  root: string;
  outDir: string;
  baseUrl?: string;
}

export interface Release {
  tarball: string;
  manifest: string;
  sha256: string;
  version: string;
  commit: string;
}

/** Bundles cli/main.ts into one executable file with the build info baked in. */
export async function bundlePlugin(root: string, info: BuildInfo): Promise<Buffer> {
  // `admin cluster register` installs infra/'s manifests: the single file carries them.
  const manifests = await readOnboardingFiles(root);
  const result = await build({
    entryPoints: [join(root, 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'error',
    define: { __OME_BUILD_INFO__: JSON.stringify(info), __OME_MANIFESTS__: JSON.stringify(manifests) },
    banner: { js: `#!/usr/bin/env node\n${CREATE_REQUIRE_BANNER}` },
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('esbuild produced no output');
  return Buffer.from(output.contents);
}

/** The README's install section, as the tarball's README. */
export function installExcerpt(readme: string, version: string): string {
  const start = readme.indexOf(`\n${INSTALL_SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "${INSTALL_SECTION}" section`);
  const rest = readme.slice(start + 1);
  const end = rest.indexOf('\n## ', INSTALL_SECTION.length);
  const section = end < 0 ? rest : rest.slice(0, end + 1);
  return `# kubectl ome ${version.startsWith('v') ? version : `v${version}`}\n\n${section.trimEnd()}\n`;
}

async function homepageOf(root: string): Promise<{ homepage?: string }> {
  const parsed = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { homepage?: unknown };
  return typeof parsed.homepage === 'string' ? { homepage: parsed.homepage } : {};
}

function commitTime(root: string): number {
  try {
    return Number(execFileSync('git', ['-C', root, 'log', '-1', '--format=%ct'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()) || 0;
  } catch {
    return 0;
  }
}

export async function buildRelease(options: ReleaseOptions): Promise<Release> {
  const { root, outDir } = options;
  const info: BuildInfo = { version: readPackageVersion(root), commit: readGitCommit(root) };
  const entries: TarEntry[] = [
    { name: 'kubectl-ome', mode: 0o755, content: await bundlePlugin(root, info) },
    { name: 'kubectl_complete-ome', mode: 0o755, content: await readFile(join(root, 'bin', 'kubectl_complete-ome')) },
    { name: 'README.md', mode: 0o644, content: Buffer.from(installExcerpt(await readFile(join(root, 'README.md'), 'utf8'), info.version)) },
  ];
  if (existsSync(join(root, 'LICENSE'))) entries.push({ name: 'LICENSE', mode: 0o644, content: await readFile(join(root, 'LICENSE')) });
  const archive = createTarGz(entries, commitTime(root));
  const sha256 = createHash('sha256').update(archive).digest('hex');
  await mkdir(outDir, { recursive: true });
  const fileName = `kubectl-ome-${info.version}.tar.gz`;
  const tarball = join(outDir, fileName);
  await writeFile(tarball, archive);
  const baseUrl = (options.baseUrl ?? pathToFileURL(outDir).href).replace(/\/$/, '');
  const manifest = join(outDir, 'ome.yaml');
  const document = buildKrewManifest({
    version: info.version,
    uri: `${baseUrl}/${fileName}`,
    sha256,
    ...(await homepageOf(root)),
    files: entries.map((entry) => entry.name),
  });
  await writeFile(manifest, formatKrewManifest(document));
  return { tarball, manifest, sha256, version: info.version, commit: info.commit };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'out-dir': { type: 'string' }, 'base-url': { type: 'string' } },
    strict: true,
  });
  const outDir = resolve(values['out-dir'] ?? join(REPOSITORY_ROOT, 'dist', 'release'));
  const baseUrl = values['base-url'] ?? process.env.RELEASE_BASE_URL;
  const release = await buildRelease({ root: REPOSITORY_ROOT, outDir, ...(baseUrl ? { baseUrl } : {}) });
  process.stdout.write(`${release.tarball}\n${release.manifest}\nversion ${release.version} commit ${release.commit || 'unknown'} sha256 ${release.sha256}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`release: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
