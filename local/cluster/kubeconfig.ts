/**
 * The kubeconfig that points kubectl and client-node at the embedded server. The server
 * speaks plain HTTP on loopback; `insecure-skip-tls-verify` is set because client-node
 * refuses an `http://` server without it (kubectl ignores it for plain HTTP).
 */
import { stringify } from 'yaml';

export const CONTEXT_NAME = 'embedded';

export function renderKubeconfig(server: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT_NAME, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: CONTEXT_NAME, user: {} }],
    contexts: [{ name: CONTEXT_NAME, context: { cluster: CONTEXT_NAME, user: CONTEXT_NAME, namespace } }],
    'current-context': CONTEXT_NAME,
    preferences: {},
  });
}
