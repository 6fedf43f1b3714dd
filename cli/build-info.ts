/**
 * The plugin's version and commit. The release bundle (`npm run release`) bakes them in
 * through esbuild's `define`. Run from the source tree (tsx, or bin/kubectl-ome's cached
 * bundle, which knows the tree it came from), the version comes from package.json and the
 * commit from git, when either can be read.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  /** The git commit the plugin was built from; '' when unknown. */
  commit: string;
}

declare const __OME_BUILD_INFO__: BuildInfo | undefined;
/** The source tree a development bundle (bin/kubectl-ome's cache) was built from. */
declare const __OME_SOURCE_ROOT__: string | undefined;

export const UNKNOWN_VERSION = '0.0.0-unknown';

/** What the build baked in, else what the source tree says. */
export function readBuildInfo(): BuildInfo {
  if (typeof __OME_BUILD_INFO__ !== 'undefined') return __OME_BUILD_INFO__;
  const root = typeof __OME_SOURCE_ROOT__ !== 'undefined' ? __OME_SOURCE_ROOT__ : join(dirname(fileURLToPath(import.meta.url)), '..');
  return { version: readPackageVersion(root), commit: readGitCommit(root) };
}

export function readPackageVersion(root: string): string {
  try {
    const parsed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : UNKNOWN_VERSION;
  } catch {
    return UNKNOWN_VERSION;
  }
}

/** The short commit, with `-dirty` when tracked files have uncommitted changes; '' outside a git checkout. */
export function readGitCommit(root: string): string {
  try {
    const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short=12', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return dirty ? `${commit}-dirty` : commit;
  } catch {
    return '';
  }
}
