/**
 * The admission webhook's settings and keys, as its handler uses them: the settings read
 * from the environment, the per-cluster token key and the front door's origin secret each
 * read through a cache from Secrets Manager or a file.
 */
import { cacheWebhookKeys, createOriginSecretReader, createWebhookKeyReader, type WebhookKeyReader } from '../adapters/webhook-key';
import { loadWebhookConfig, WebhookEnv, type WebhookConfig } from '../domain/webhook/webhook-settings';

export interface WebhookWiring {
  config: WebhookConfig;
  keys: WebhookKeyReader;
  originSecret?: () => Promise<Buffer>;
}

/**
 * Read on the first call and kept. In Lambda the environment never changes; in one local
 * process a new control plane may point the webhook at another key file, which is read then.
 */
let wiring: { source: string; value: WebhookWiring } | undefined;

export function webhookWiringOf(env: Record<string, string | undefined>): WebhookWiring {
  const source = JSON.stringify(Object.values(WebhookEnv).map((name) => env[name] ?? ''));
  if (wiring?.source !== source) {
    const config = loadWebhookConfig(env);
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
    const keys = cacheWebhookKeys(createWebhookKeyReader(config.key, region));
    const originSecret = config.origin ? cacheWebhookKeys(createOriginSecretReader(config.origin, region)) : undefined;
    wiring = { source, value: { config, keys, ...(originSecret ? { originSecret } : {}) } };
  }
  return wiring.value;
}
