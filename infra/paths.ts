import { fileURLToPath } from 'node:url';

/** The CRD manifests, one per file: applied by OME's charts upstream, by us on test and embedded clusters. */
export const CRD_DIRECTORY = fileURLToPath(new URL('./crds/', import.meta.url));

/** The cluster-side RBAC and admission webhook manifests. */
export const CLUSTER_MANIFEST_DIRECTORY = fileURLToPath(new URL('./k8s/', import.meta.url));

/**
 * The ValidatingWebhookConfiguration as a template: each cluster's copy needs its own
 * URLs (with the cluster's token), so it is not a manifest `kubectl apply -f infra/k8s/`
 * would pick up. `npm run -s webhook-config` renders it.
 */
export const WEBHOOK_CONFIGURATION_TEMPLATE = fileURLToPath(new URL('./k8s/webhook.yaml.tmpl', import.meta.url));

/**
 * Upstream OME's field paths for the parts of its API the plane reads and writes, as data
 * (`scripts/upstream-fields.ts` regenerates it from an upstream checkout; see docs/upstream-schema.md).
 */
export const UPSTREAM_FIELDS_FILE = fileURLToPath(new URL('./crds/upstream/fields.json', import.meta.url));

/** The admission webhook's front door: the CloudFront Function the stack deploys, which the local control plane runs too. */
export const FRONT_DOOR_FUNCTION = fileURLToPath(new URL('./front-door/viewer-request.js', import.meta.url));
