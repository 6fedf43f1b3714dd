/**
 * The admission webhook's settings, read once from the environment on the first call.
 * They live apart from ControlPlaneConfig: no other function needs them, and the webhook
 * must answer a rejected caller without the table's configuration.
 */
import { parseDurationSetting } from '../go-duration';
import { InvalidInputError } from '../errors';

/** What the API server does when the webhook cannot answer, and what the webhook answers when it cannot finish. */
export type WebhookFailurePolicy = 'Fail' | 'Ignore';

/**
 * `timeoutSeconds` of both webhooks in infra/k8s/webhook.yaml.tmpl, and the function's
 * timeout in serverless.yml: the API server waits this long, so the function never needs
 * longer. The review's budget stays well below it
 * (shared/use-cases/admission/webhook-request.ts).
 */
export const WEBHOOK_TIMEOUT_SECONDS = 10;

/** The review's own time budget unless ADMISSION_TIME_BUDGET says otherwise. */
export const DEFAULT_TIME_BUDGET_MS = 7_000;

/**
 * The largest body read. The API server accepts request bodies up to 3 MiB and stores
 * objects up to 1.5 MiB (etcd), and an UPDATE review carries the new object and the old
 * one; a function URL refuses more than 6 MB anyway.
 */
export const MAX_REVIEW_BYTES = 5 * 1024 * 1024;

/** Where the webhook's key is read from. */
export type WebhookKeySourceConfig =
  /** A Secrets Manager secret; the first stage is the current key, the others are still accepted (a rotation). */
  | { kind: 'secret'; secretId: string; stages: string[] }
  /** A file holding the key (the local control plane). */
  | { kind: 'file'; path: string };

export interface WebhookSettings {
  failurePolicy: WebhookFailurePolicy;
  timeBudgetMs: number;
  maxBodyBytes: number;
}

/**
 * Where the front door's origin secret is read from: the value the front door adds to every
 * call it passes (header ORIGIN_SECRET_HEADER). Unset, the function takes calls from anyone
 * (tests, a webhook served without a front door).
 */
export type OriginSecretSourceConfig = { kind: 'secret'; secretId: string } | { kind: 'file'; path: string };

export interface WebhookConfig extends WebhookSettings {
  key: WebhookKeySourceConfig;
  origin?: OriginSecretSourceConfig;
}

export const WebhookEnv = {
  keySecret: 'ADMISSION_WEBHOOK_KEY_SECRET',
  keyStages: 'ADMISSION_WEBHOOK_KEY_STAGES',
  keyFile: 'ADMISSION_WEBHOOK_KEY_FILE',
  originSecret: 'ADMISSION_ORIGIN_SECRET',
  originSecretFile: 'ADMISSION_ORIGIN_SECRET_FILE',
  failurePolicy: 'ADMISSION_FAILURE_POLICY',
  timeBudget: 'ADMISSION_TIME_BUDGET',
} as const;

type Env = Record<string, string | undefined>;

function readKeySource(env: Env): WebhookKeySourceConfig {
  const secretId = env[WebhookEnv.keySecret];
  if (secretId) {
    const stages = (env[WebhookEnv.keyStages] || 'AWSCURRENT')
      .split(',')
      .map((stage) => stage.trim())
      .filter((stage) => stage !== '');
    if (stages.length === 0) throw new InvalidInputError(`${WebhookEnv.keyStages} names no stage`);
    return { kind: 'secret', secretId, stages };
  }
  const path = env[WebhookEnv.keyFile];
  if (path) return { kind: 'file', path };
  throw new InvalidInputError(`neither ${WebhookEnv.keySecret} nor ${WebhookEnv.keyFile} is set: the webhook has no key to check tokens with`);
}

/** Builds the webhook's settings from environment variables; throws InvalidInputError naming the bad one. */
export function loadWebhookConfig(env: Env): WebhookConfig {
  const policy = env[WebhookEnv.failurePolicy] || 'Fail';
  if (policy !== 'Fail' && policy !== 'Ignore') throw new InvalidInputError(`${WebhookEnv.failurePolicy}=${JSON.stringify(policy)} must be Fail or Ignore`);
  const budget = env[WebhookEnv.timeBudget];
  const timeBudgetMs = budget ? parseDurationSetting(WebhookEnv.timeBudget, budget) : DEFAULT_TIME_BUDGET_MS;
  if (timeBudgetMs >= WEBHOOK_TIMEOUT_SECONDS * 1000) {
    throw new InvalidInputError(`${WebhookEnv.timeBudget}=${budget} must stay below the webhook's timeoutSeconds (${WEBHOOK_TIMEOUT_SECONDS}s)`);
  }
  const originSecret = env[WebhookEnv.originSecret];
  const originFile = env[WebhookEnv.originSecretFile];
  const origin: OriginSecretSourceConfig | undefined = originSecret ? { kind: 'secret', secretId: originSecret } : originFile ? { kind: 'file', path: originFile } : undefined;
  return { failurePolicy: policy, timeBudgetMs, maxBodyBytes: MAX_REVIEW_BYTES, key: readKeySource(env), ...(origin ? { origin } : {}) };
}
