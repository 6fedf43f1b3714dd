/**
 * One cluster's ValidatingWebhookConfiguration, rendered from infra/k8s/webhook.yaml.tmpl:
 * each webhook's URL becomes the cluster's authenticated URL for its route, and the
 * revision-immutability webhook selects the cluster's OME namespace (its registry
 * record's `omeNamespace`), where the plane and OME keep revisions. The template's
 * placeholder host never resolves, so the template itself, applied by mistake, calls no one.
 */
import { parse as parseYaml } from 'yaml';
import { InvalidInputError } from '../../domain/errors';
import type { KubeObject } from '../../ports/cluster';
import { WebhookRoute, webhookUrlOf, type WebhookRouteName } from '../../domain/webhook/webhook-token';
import type { WebhookFailurePolicy } from '../../domain/webhook/webhook-settings';

interface TemplateWebhook {
  name: string;
  failurePolicy?: string;
  clientConfig?: { url?: string; caBundle?: string };
  namespaceSelector?: { matchLabels?: Record<string, string> };
}

/** The label every namespace carries with its own name (Kubernetes 1.21+). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** A namespace name: an RFC 1123 label. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface WebhookConfigurationInput {
  /** The function URL (or the local server), without a path. */
  baseUrl: string;
  clusterId: string;
  /** OME's namespace in the cluster (the registry record's `omeNamespace`): the revisions the immutability webhook guards. */
  omeNamespace: string;
  /** deriveWebhookToken(key, clusterId). */
  token: string;
  /** Overrides the template's `failurePolicy: Fail`. */
  failurePolicy?: WebhookFailurePolicy;
  /** base64 PEM of the endpoint's CA; none for a publicly trusted certificate (a function URL). */
  caBundle?: string;
}

const ROUTES: readonly string[] = Object.values(WebhookRoute);

function routeOf(webhook: TemplateWebhook): WebhookRouteName {
  const route = new URL(webhook.clientConfig?.url ?? '/', 'https://placeholder.invalid').pathname.split('/').pop() ?? '';
  if (!ROUTES.includes(route)) throw new InvalidInputError(`webhook ${webhook.name}: the template's URL names no route (${ROUTES.join(' or ')})`);
  return route as WebhookRouteName;
}

/** Renders the template's text for one cluster; throws InvalidInputError when it is not the expected template. */
export function renderWebhookConfiguration(templateText: string, input: WebhookConfigurationInput): KubeObject {
  const configuration = parseYaml(templateText) as KubeObject & { webhooks?: TemplateWebhook[] };
  if (configuration?.kind !== 'ValidatingWebhookConfiguration' || !Array.isArray(configuration.webhooks)) {
    throw new InvalidInputError('the webhook template is not a ValidatingWebhookConfiguration with webhooks');
  }
  if (!NAMESPACE_NAME.test(input.omeNamespace)) throw new InvalidInputError(`OME namespace ${JSON.stringify(input.omeNamespace)} is not a namespace name`);
  for (const webhook of configuration.webhooks) {
    const route = routeOf(webhook);
    const url = webhookUrlOf(input.baseUrl, input.clusterId, input.token, route);
    webhook.clientConfig = { url, ...(input.caBundle ? { caBundle: input.caBundle } : {}) };
    if (input.failurePolicy) webhook.failurePolicy = input.failurePolicy;
    if (route === WebhookRoute.controllerRevision) webhook.namespaceSelector = { matchLabels: { [NAMESPACE_NAME_LABEL]: input.omeNamespace } };
  }
  return configuration;
}
