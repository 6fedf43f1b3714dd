import { fileURLToPath } from 'node:url';

/** The CRD manifests, one per file: applied by OME's charts upstream, by us on test and embedded clusters. */
export const CRD_DIRECTORY = fileURLToPath(new URL('./crds/', import.meta.url));

/** The cluster-side RBAC and admission webhook manifests. */
export const CLUSTER_MANIFEST_DIRECTORY = fileURLToPath(new URL('./k8s/', import.meta.url));
