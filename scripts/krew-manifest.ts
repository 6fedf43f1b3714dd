/**
 * The krew plugin manifest (`krew.googlecontainers.io/v1alpha2`, kind Plugin) for the
 * release tarball: one platform entry for every OS Node runs the plugin on, pointing at the
 * tarball by URI and sha256, with `kubectl-ome` as the binary krew links onto the PATH.
 */
import { stringify } from 'yaml';

export const KREW_API_VERSION = 'krew.googlecontainers.io/v1alpha2';
export const PLUGIN_NAME = 'ome';

export interface KrewManifestInput {
  version: string;
  uri: string;
  sha256: string;
  /** The project's homepage, when package.json names one. */
  homepage?: string;
  /** The files the tarball holds, copied as they are. */
  files: readonly string[];
}

export function buildKrewManifest(input: KrewManifestInput): Record<string, unknown> {
  return {
    apiVersion: KREW_API_VERSION,
    kind: 'Plugin',
    metadata: { name: PLUGIN_NAME },
    spec: {
      version: input.version.startsWith('v') ? input.version : `v${input.version}`,
      ...(input.homepage ? { homepage: input.homepage } : {}),
      shortDescription: 'OME runtime pinning and rollout plan repin',
      description:
        'Shows and moves the runtime revision an OME InferenceService is pinned to, explains and repins its\n' +
        'rollout plan, and registers clusters with the OME pinning control plane. Needs Node.js 20.19 or later\n' +
        'on the PATH.\n',
      caveats: 'Needs Node.js 20.19 or later on the PATH. For shell completion, put kubectl_complete-ome from the\nplugin\'s directory on the PATH too.\n',
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
          uri: input.uri,
          sha256: input.sha256,
          files: input.files.map((file) => ({ from: file, to: '.' })),
          bin: 'kubectl-ome',
        },
      ],
    },
  };
}

export function formatKrewManifest(manifest: Record<string, unknown>): string {
  return stringify(manifest, { lineWidth: 0 });
}
