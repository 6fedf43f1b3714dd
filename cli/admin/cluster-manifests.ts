/**
 * The manifests `admin cluster register` installs: the CRDs of infra/crds, the plane's
 * namespace (infra/k8s/namespace.yaml), every infra/k8s/rbac-*.yaml and policy-*.yaml, and
 * the webhook template. The release bundle carries their text (baked in by `npm run
 * release`); run from the source tree they are read from infra/.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

import type { KubeObject } from '../../shared/ports/cluster';

declare const __OME_MANIFESTS__: Record<string, string> | undefined;
declare const __OME_SOURCE_ROOT__: string | undefined;

export const WEBHOOK_TEMPLATE_PATH = 'infra/k8s/webhook.yaml.tmpl';

export interface OnboardingManifests {
  crds: KubeObject[];
  /** The plane's namespace, RBAC and admission policies, file by file (sorted), document by document. */
  access: KubeObject[];
  webhookTemplate: string;
}

/** Which files of infra/ are installed: every CRD, the namespace, every rbac-* and policy-* manifest, the webhook template. */
export function isOnboardingFile(path: string): boolean {
  return /^infra\/crds\/[^/]+\.yaml$/.test(path) || /^infra\/k8s\/(namespace|(rbac|policy)-[^/]+)\.yaml$/.test(path) || path === WEBHOOK_TEMPLATE_PATH;
}

/** The files' text by path relative to the repository root, read from `root`. */
export async function readOnboardingFiles(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const folder of ['infra/crds', 'infra/k8s']) {
    for (const name of (await readdir(join(root, folder))).sort()) {
      const path = `${folder}/${name}`;
      if (isOnboardingFile(path)) files[path] = await readFile(join(root, path), 'utf8');
    }
  }
  return files;
}

function objectsOf(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && typeof object === 'object' && typeof object.kind === 'string');
}

/** Splits the files into what register installs, in a stable order. */
export function parseOnboardingFiles(files: Record<string, string>): OnboardingManifests {
  const paths = Object.keys(files).sort();
  const webhookTemplate = files[WEBHOOK_TEMPLATE_PATH];
  if (webhookTemplate === undefined) throw new Error(`${WEBHOOK_TEMPLATE_PATH} is missing`);
  return {
    crds: paths.filter((path) => path.startsWith('infra/crds/')).flatMap((path) => objectsOf(files[path] as string)),
    access: paths.filter((path) => path.startsWith('infra/k8s/') && path !== WEBHOOK_TEMPLATE_PATH).flatMap((path) => objectsOf(files[path] as string)),
    webhookTemplate,
  };
}

export async function loadOnboardingManifests(): Promise<OnboardingManifests> {
  if (typeof __OME_MANIFESTS__ !== 'undefined') return parseOnboardingFiles(__OME_MANIFESTS__);
  const root = typeof __OME_SOURCE_ROOT__ !== 'undefined' ? __OME_SOURCE_ROOT__ : join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return parseOnboardingFiles(await readOnboardingFiles(root));
}
