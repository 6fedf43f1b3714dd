/**
 * Validating admission webhooks, as kube-apiserver 1.32 calls them: every webhook of
 * every ValidatingWebhookConfiguration whose rules, namespaceSelector and objectSelector
 * match receives an AdmissionReview v1 (HTTP, or HTTPS trusting `caBundle`), in
 * parallel; a denial becomes the webhook's Status with the message prefixed
 * `admission webhook "<name>" denied the request: `; a call that fails or times out
 * fails the request under `failurePolicy: Fail` and is skipped under `Ignore`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { ApiError, badRequest, internalError, type Status } from './api-errors';
import type { KubeObject, ResourceDef } from './registry';
import { fromStructuredSelector, matchesLabels, type StructuredLabelSelector } from './selectors';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  def: ResourceDef;
  subresource: string;
  namespace?: string;
  name: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun: boolean;
  options: Record<string, unknown>;
}

interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

interface Webhook {
  name: string;
  clientConfig?: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
  rules?: WebhookRule[];
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds?: number;
  sideEffects?: string;
  namespaceSelector?: StructuredLabelSelector;
  objectSelector?: StructuredLabelSelector;
  admissionReviewVersions?: string[];
}

export interface AdmissionSources {
  /** Current ValidatingWebhookConfiguration objects. */
  configurations(): KubeObject[];
  /** Labels of a namespace, undefined when it does not exist. */
  namespaceLabels(name: string): Record<string, string> | undefined;
}

function ruleMatches(rule: WebhookRule, attrs: AdmissionAttributes): boolean {
  const { def } = attrs;
  const any = (list: string[] | undefined, value: string): boolean => (list ?? []).some((v) => v === '*' || v === value);
  if (!any(rule.operations, attrs.operation)) return false;
  if (!any(rule.apiGroups, def.group)) return false;
  if (!any(rule.apiVersions, def.version)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && def.namespaced) return false;
  if (scope === 'Namespaced' && !def.namespaced) return false;
  return (rule.resources ?? []).some((entry) => {
    const [res = '', sub] = entry.split('/');
    if (sub === undefined) return attrs.subresource === '' && (res === '*' || res === def.plural);
    if (res === '*' && sub === '*') return true;
    const resOk = res === '*' || res === def.plural;
    const subOk = attrs.subresource !== '' && (sub === '*' || sub === attrs.subresource);
    return resOk && subOk;
  });
}

export class WebhookAdmission {
  constructor(private readonly sources: AdmissionSources) {}

  /** Runs the matching webhooks; resolves with their warnings or throws the request's ApiError. */
  async validate(attrs: AdmissionAttributes): Promise<string[]> {
    if (attrs.def.group === 'admissionregistration.k8s.io') return [];
    const webhooks = this.matching(attrs);
    for (const webhook of webhooks) {
      if (attrs.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
        throw badRequest(`admission webhook "${webhook.name}" does not support dry run`);
      }
    }
    const outcomes = await Promise.all(webhooks.map((webhook) => this.call(webhook, attrs)));
    const warnings: string[] = [];
    for (const outcome of outcomes) {
      if (outcome instanceof ApiError) throw outcome;
      warnings.push(...outcome);
    }
    return warnings;
  }

  private matching(attrs: AdmissionAttributes): Webhook[] {
    const result: Webhook[] = [];
    for (const config of this.sources.configurations()) {
      const webhooks = Array.isArray(config.webhooks) ? (config.webhooks as Webhook[]) : [];
      for (const webhook of webhooks) {
        if (!(webhook.rules ?? []).some((rule) => ruleMatches(rule, attrs))) continue;
        if (!this.namespaceMatches(webhook, attrs)) continue;
        if (!this.objectMatches(webhook, attrs)) continue;
        result.push(webhook);
      }
    }
    return result;
  }

  private namespaceMatches(webhook: Webhook, attrs: AdmissionAttributes): boolean {
    const selector = fromStructuredSelector(webhook.namespaceSelector);
    if (selector.length === 0) return true;
    if (attrs.def.plural === 'namespaces' && attrs.def.group === '') {
      const labels = (attrs.object ?? attrs.oldObject)?.metadata.labels;
      return matchesLabels(selector, labels);
    }
    if (!attrs.def.namespaced || attrs.namespace === undefined) return true;
    return matchesLabels(selector, this.sources.namespaceLabels(attrs.namespace) ?? {});
  }

  private objectMatches(webhook: Webhook, attrs: AdmissionAttributes): boolean {
    const selector = fromStructuredSelector(webhook.objectSelector);
    if (selector.length === 0) return true;
    return [attrs.object, attrs.oldObject].some((o) => o !== undefined && matchesLabels(selector, o.metadata.labels));
  }

  private review(attrs: AdmissionAttributes, uid: string): unknown {
    const { def } = attrs;
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const gvr = { group: def.group, version: def.version, resource: def.plural };
    const request: Record<string, unknown> = {
      uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: attrs.name,
      operation: attrs.operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: attrs.object ?? null,
      oldObject: attrs.oldObject ?? null,
      dryRun: attrs.dryRun,
      options: attrs.options,
    };
    if (attrs.subresource !== '') {
      request.subResource = attrs.subresource;
      request.requestSubResource = attrs.subresource;
    }
    if (attrs.namespace !== undefined) request.namespace = attrs.namespace;
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
  }

  private async call(webhook: Webhook, attrs: AdmissionAttributes): Promise<string[] | ApiError> {
    const timeoutSeconds = webhook.timeoutSeconds ?? 10;
    const base = webhook.clientConfig?.url;
    const uid = randomUUID();
    try {
      if (!base) throw new Error('webhook clientConfig.service is not reachable from this server; use clientConfig.url');
      const url = new URL(base);
      url.searchParams.set('timeout', `${timeoutSeconds}s`);
      const body = await postJson(url, this.review(attrs, uid), timeoutSeconds * 1000, webhook.clientConfig?.caBundle);
      return this.interpret(webhook, body, uid);
    } catch (error) {
      if (error instanceof ApiError) return error;
      if (webhook.failurePolicy === 'Ignore') return [];
      const target = base ? `Post "${withTimeout(base, timeoutSeconds)}": ` : '';
      const detail = error instanceof Error ? error.message : String(error);
      return internalError(`failed calling webhook "${webhook.name}": failed to call webhook: ${target}${detail}`);
    }
  }

  private interpret(webhook: Webhook, body: unknown, uid: string): string[] | ApiError {
    const review = body as { response?: { uid?: string; allowed?: boolean; status?: Partial<Status>; warnings?: string[] } };
    const response = review?.response;
    if (!response) throw new Error('received invalid webhook response: webhook response was absent');
    if (response.uid !== uid) throw new Error(`received invalid webhook response: expected response.uid="${uid}", got "${String(response.uid)}"`);
    if (response.allowed) return response.warnings ?? [];
    const result = response.status ?? {};
    const deniedBy = `admission webhook "${webhook.name}" denied the request`;
    let message: string;
    if (result.message) message = `${deniedBy}: ${result.message}`;
    else if (result.reason) message = `${deniedBy}: ${result.reason}`;
    else message = `${deniedBy} without explanation`;
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason: result.reason ?? '',
      code: result.code && result.code !== 0 ? result.code : 500,
    };
    if (result.details) status.details = result.details;
    return new ApiError(status);
  }
}

function withTimeout(base: string, seconds: number): string {
  const url = new URL(base);
  url.searchParams.set('timeout', `${seconds}s`);
  return url.toString();
}

function postJson(url: URL, payload: unknown, timeoutMs: number, caBundle?: string): Promise<unknown> {
  const data = JSON.stringify(payload);
  const options: https.RequestOptions = {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(data) },
  };
  if (caBundle) options.ca = Buffer.from(caBundle, 'base64').toString('utf8');
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
          reject(new Error(`received invalid webhook response: the server responded with the status code ${String(res.statusCode)}`));
          return;
        }
        try {
          resolve(JSON.parse(text));
        } catch (error) {
          reject(new Error(`received invalid webhook response: ${error instanceof Error ? error.message : String(error)}`));
        }
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', reject);
    req.end(data);
  });
}
