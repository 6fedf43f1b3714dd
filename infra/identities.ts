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

/**
 * The namespace of the plane's ServiceAccounts (`k8s/namespace.yaml`): a namespace of their
 * own, where the plane creates nothing, so no object the plane writes can run as one of them.
 * OME's namespace (`ome`), where the plane writes revisions, holds none of them.
 */
export const SERVICE_ACCOUNT_NAMESPACE = 'ome-pinning-system';

/**
 * The manifests of `k8s/` that set up access: the plane's namespace, roles, bindings,
 * ServiceAccounts and admission policies. Applied in name order, `namespace.yaml` comes first.
 */
export function isAccessManifest(fileName: string): boolean {
  return /^(namespace|(rbac|policy)-.*)\.ya?ml$/.test(fileName);
}
