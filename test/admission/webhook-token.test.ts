import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveWebhookToken, parseWebhookPath, verifyWebhookToken, webhookUrlOf, WebhookRoute } from '../../shared/domain/webhook/webhook-token';

const KEY = Buffer.from('k'.repeat(48));
const OLD_KEY = Buffer.from('o'.repeat(48));
const keys = { current: KEY, accepted: [] };

describe('Method: deriveWebhookToken', () => {
  it('is base64url(HMAC-SHA256(key, cluster id)), 43 characters without padding', () => {
    // Act
    const token = deriveWebhookToken(KEY, 'prod-eu-1');

    // Assess
    expect(token).toBe(createHmac('sha256', KEY).update('prod-eu-1').digest('base64url'));
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(deriveWebhookToken(KEY, 'prod-eu-2')).not.toBe(token);
    expect(deriveWebhookToken(OLD_KEY, 'prod-eu-1')).not.toBe(token);
  });
});

describe('Method: verifyWebhookToken', () => {
  const token = deriveWebhookToken(KEY, 'prod-eu-1');

  it.each([
    ["the cluster's own token", 'prod-eu-1', token, true],
    ["another cluster's token", 'prod-eu-2', token, false],
    ['a token one character off', 'prod-eu-1', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, false],
    ['a truncated token', 'prod-eu-1', token.slice(0, 42), false],
    ['a token with padding', 'prod-eu-1', `${token}=`, false],
    ['the digest in padded standard base64', 'prod-eu-1', createHmac('sha256', KEY).update('prod-eu-1').digest('base64'), false],
    ['an empty token', 'prod-eu-1', '', false],
    ['a token of another form', 'prod-eu-1', '%41'.repeat(15), false],
  ])('%s → %s', (_name, clusterId, presented, expected) => {
    expect(verifyWebhookToken(keys, clusterId, presented)).toBe(expected);
  });

  it('accepts a token of a key still accepted during a rotation, and only while it is', () => {
    // Prepare
    const oldToken = deriveWebhookToken(OLD_KEY, 'prod-eu-1');

    // Assess
    expect(verifyWebhookToken({ current: KEY, accepted: [OLD_KEY] }, 'prod-eu-1', oldToken)).toBe(true);
    expect(verifyWebhookToken({ current: KEY, accepted: [OLD_KEY] }, 'prod-eu-1', token)).toBe(true);
    expect(verifyWebhookToken({ current: KEY, accepted: [] }, 'prod-eu-1', oldToken)).toBe(false);
  });
});

describe('Method: parseWebhookPath', () => {
  const token = deriveWebhookToken(KEY, 'prod-eu-1');

  it.each([
    [`/clusters/prod-eu-1/${token}/validate/inferenceservice`, { kind: 'route', clusterId: 'prod-eu-1', token, route: 'inferenceservice' }],
    [`/clusters/prod-eu-1/${token}/validate/controllerrevision/`, { kind: 'route', clusterId: 'prod-eu-1', token, route: 'controllerrevision' }],
    [`/clusters/team%2Fa/${token}/validate/inferenceservice`, { kind: 'route', clusterId: 'team/a', token, route: 'inferenceservice' }],
    [`/clusters/%E0%A4%A/${token}/validate/inferenceservice`, { kind: 'malformed' }],
    [`/clusters/%/${token}/validate/inferenceservice`, { kind: 'malformed' }],
    ['/clusters/prod-eu-1/validate/inferenceservice', { kind: 'unauthenticated' }],
    ['/validate/inferenceservice', { kind: 'unauthenticated' }],
    ['/validate', { kind: 'unauthenticated' }],
    [`/clusters/prod-eu-1/${token}/validate/pods`, { kind: 'unknown' }],
    ['/', { kind: 'unknown' }],
    ['/clusters/prod-eu-1', { kind: 'unknown' }],
    [`/stage/clusters/prod-eu-1/${token}/validate/inferenceservice`, { kind: 'unauthenticated' }],
  ])('%s → %j', (path, expected) => {
    expect(parseWebhookPath(path)).toEqual(expected);
  });

  it('reads back what webhookUrlOf writes, for any cluster id', () => {
    for (const clusterId of ['prod-eu-1', 'team/a', 'ü 100%']) {
      // Act
      const url = new URL(webhookUrlOf('https://abc.lambda-url.eu-west-1.on.aws/', clusterId, deriveWebhookToken(KEY, clusterId), WebhookRoute.inferenceService));

      // Assess
      expect(parseWebhookPath(url.pathname)).toEqual({ kind: 'route', clusterId, token: deriveWebhookToken(KEY, clusterId), route: 'inferenceservice' });
    }
  });
});
