/**
 * Each function acts in an embedded cluster under its own identity: the context named
 * after it in `<data-dir>/clusters/<cluster-id>.kubeconfig`, which holds its
 * ServiceAccount's token. The cluster's registry record names that file
 * (`kubeconfig-file`), and the app context picks the running function's context from it
 * (`runAsFunction` in shared/app/context.ts); outside any function the file's current
 * context, the operator's, is used.
 */
import { join } from 'node:path';

/** `<dataDir>/clusters/<clusterId>.kubeconfig`: the identities of one embedded cluster (mode 0600). */
export function identityKubeconfigPathOf(dataDir: string, clusterId: string): string {
  return join(dataDir, 'clusters', `${clusterId}.kubeconfig`);
}
