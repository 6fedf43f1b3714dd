/**
 * The kubeconfigs that point kubectl and client-node at the embedded server: its `https://`
 * URL with the serving certificate as CA (kubectl sends tokens only over TLS), and bearer
 * tokens as users. Given an `http://` server (tests of clients without credentials),
 * `insecure-skip-tls-verify` is set because client-node refuses such a server without it.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

export const CONTEXT_NAME = 'embedded';

/** What a local cluster, embedded or real (local/real-cluster), hands out: its TLS endpoint and kubeconfigs. */
export interface ClusterKubeconfigs {
  /** `https://127.0.0.1:<port>`, as the kubeconfigs name it. */
  httpsUrl: string;
  /** base64 PEM of the CA to trust for `httpsUrl`. */
  caData: string;
  /** The operator's kubeconfig (YAML): cluster, user and context named `embedded`, a token in `system:masters`. */
  kubeconfig: string;
  /** Writes `kubeconfig` (mode 0600). */
  writeKubeconfig(path: string): Promise<void>;
  /**
   * The operator's context (current) plus one context per function, named after the
   * function (`pin`, `drift-check`, …), holding its ServiceAccount's token.
   */
  identityKubeconfig: string;
  /** Writes `identityKubeconfig` (mode 0600). */
  writeIdentityKubeconfig(path: string): Promise<void>;
}

/** Writes a file that holds credentials: its directory made, mode 0600 even when it existed wider. */
export async function writeSecretFile(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text, { mode: 0o600 });
  // writeFile's mode applies only to a new file; an older one may be wider.
  await chmod(path, 0o600);
}

/** One identity of an identity kubeconfig: its context (and user) name and bearer token. */
export interface KubeconfigIdentity {
  context: string;
  token: string;
  namespace?: string;
}

/** The operator's kubeconfig: cluster, user and context all named `embedded`. */
/** Where the server is: its URL and, for TLS, the base64 PEM CA to trust. */
export type KubeconfigEndpoint = string | { server: string; caData?: string };

function clusterEntry(endpoint: KubeconfigEndpoint): Record<string, unknown> {
  const { server, caData } = typeof endpoint === 'string' ? { server: endpoint, caData: undefined } : endpoint;
  if (caData !== undefined && server.startsWith('https:')) return { server, 'certificate-authority-data': caData };
  return { server, 'insecure-skip-tls-verify': true };
}

export function renderKubeconfig(server: KubeconfigEndpoint, namespace = 'default', token?: string): string {
  return renderIdentityKubeconfig(server, { context: CONTEXT_NAME, token: token ?? '', namespace }, []);
}

/**
 * A kubeconfig with the operator's context (current) and one context per further identity,
 * each with its own user of the same name holding that identity's token.
 */
export function renderIdentityKubeconfig(server: KubeconfigEndpoint, admin: KubeconfigIdentity, identities: KubeconfigIdentity[]): string {
  const all = [admin, ...identities];
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT_NAME, cluster: clusterEntry(server) }],
    users: all.map((identity) => ({ name: identity.context, user: identity.token === '' ? {} : { token: identity.token } })),
    contexts: all.map((identity) => ({
      name: identity.context,
      context: { cluster: CONTEXT_NAME, user: identity.context, namespace: identity.namespace ?? 'default' },
    })),
    'current-context': admin.context,
    preferences: {},
  });
}
