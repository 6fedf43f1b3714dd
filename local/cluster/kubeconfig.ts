/**
 * The kubeconfigs that point kubectl and client-node at the embedded server: its `https://`
 * URL with the serving certificate as CA (kubectl sends tokens only over TLS), and bearer
 * tokens as users. Given an `http://` server (tests of clients without credentials),
 * `insecure-skip-tls-verify` is set because client-node refuses such a server without it.
 */
import { stringify } from 'yaml';

export const CONTEXT_NAME = 'embedded';

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
