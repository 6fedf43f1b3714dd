/**
 * Each function's identity in a cluster: the ServiceAccount that its `k8s/rbac-*.yaml`
 * binds to its role. Local clusters write one kubeconfig context per function, named after
 * the function, holding this ServiceAccount's token.
 */
export const FUNCTION_SERVICE_ACCOUNTS = {
  'forward-watch-events': 'ome-pinning-forwarder',
  pin: 'ome-pinning-pin',
  'drift-check': 'ome-pinning-drift-check',
  'repin-apply': 'ome-pinning-repin-apply',
  'rollout-run': 'ome-pinning-rollout-run',
  'revision-gc': 'ome-pinning-revision-gc',
  resync: 'ome-pinning-resync',
  'admission-webhook': 'ome-pinning-admission-webhook',
} as const;

export type FunctionName = keyof typeof FUNCTION_SERVICE_ACCOUNTS;

/** The namespace of the plane's ServiceAccounts (OME's namespace in the shipped manifests). */
export const SERVICE_ACCOUNT_NAMESPACE = 'ome';

/** The manifests of `k8s/` that set up access: roles, bindings, ServiceAccounts and admission policies. */
export function isAccessManifest(fileName: string): boolean {
  return /^(rbac|policy)-.*\.ya?ml$/.test(fileName);
}
