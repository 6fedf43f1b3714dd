/**
 * The front door's CloudFront Function (infra/front-door/viewer-request.js), run as the
 * local front door runs it: which calls it passes to the webhook's function URL, and how it
 * answers the rest. A cluster passes only with the token whose digest its entry holds.
 */
import { describe, expect, it } from 'vitest';
import { loadViewerRequestFunction } from '../../local/front-door';
import { deriveWebhookToken, frontDoorEntryOf } from '../../shared/domain/webhook/webhook-token';

const KEY = Buffer.alloc(32, 7);
const TOKEN = deriveWebhookToken(KEY, 'prod-eu-1');
const OTHER_TOKEN = deriveWebhookToken(KEY, 'prod-us-1');
const entries = new Map([frontDoorEntryOf('prod-eu-1', TOKEN), frontDoorEntryOf('prod-us-1', OTHER_TOKEN)].map(({ key, value }) => [key, value]));
const handler = loadViewerRequestFunction((key) => entries.get(key));

async function statusOf(method: string, uri: string): Promise<number | 'passed'> {
  const request = { method, uri, querystring: { timeout: { value: '10s' } }, headers: { host: { value: 'door.example' } } };
  const result = await handler({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '192.0.2.1' }, request });
  return 'statusCode' in result ? result.statusCode : result === request ? 'passed' : -1;
}

describe('the front door function', () => {
  it.each([
    ['a registered cluster, its own token, either route', 'POST', `/clusters/prod-eu-1/${TOKEN}/validate/inferenceservice`, 'passed'],
    ['the revision route, with a trailing slash', 'POST', `/clusters/prod-eu-1/${TOKEN}/validate/controllerrevision/`, 'passed'],
    ["another registered cluster's token", 'POST', `/clusters/prod-eu-1/${OTHER_TOKEN}/validate/inferenceservice`, 403],
    ['a cluster without an entry (never registered, or revoked)', 'POST', `/clusters/prod-ap-1/${deriveWebhookToken(KEY, 'prod-ap-1')}/validate/inferenceservice`, 403],
    ['a token one character off', 'POST', `/clusters/prod-eu-1/${TOKEN.slice(0, -1)}${TOKEN.endsWith('A') ? 'B' : 'A'}/validate/inferenceservice`, 403],
    ['no token', 'POST', '/clusters/prod-eu-1/validate/inferenceservice', 403],
    ['a route the webhook does not serve', 'POST', `/clusters/prod-eu-1/${TOKEN}/validate/deployment`, 403],
    ['the root', 'GET', '/', 403],
    ['a token of the wrong length', 'POST', `/clusters/prod-eu-1/${TOKEN}x/validate/inferenceservice`, 403],
    ['GET with a valid token', 'GET', `/clusters/prod-eu-1/${TOKEN}/validate/inferenceservice`, 405],
    ['a % escape that does not decode', 'POST', `/clusters/%E0%A4%A/${TOKEN}/validate/inferenceservice`, 400],
  ])('%s → %s', async (_case, method, uri, expected) => {
    expect(await statusOf(method, uri)).toBe(expected);
  });

  it('refuses a cluster as soon as its entry is deleted', async () => {
    const revoked = new Map(entries);
    revoked.delete(frontDoorEntryOf('prod-eu-1', TOKEN).key);
    const door = loadViewerRequestFunction((key) => revoked.get(key));
    const request = { method: 'POST', uri: `/clusters/prod-eu-1/${TOKEN}/validate/inferenceservice`, querystring: {}, headers: {} };

    const result = await door({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '192.0.2.1' }, request });

    expect(result).toMatchObject({ statusCode: 403 });
  });

  it('passes either of two digests while a rotation moves the cluster to its new token', async () => {
    const newToken = deriveWebhookToken(Buffer.alloc(32, 9), 'prod-eu-1');
    const rotating = new Map([['cluster/prod-eu-1', `${frontDoorEntryOf('prod-eu-1', newToken).value} ${frontDoorEntryOf('prod-eu-1', TOKEN).value}`]]);
    const door = loadViewerRequestFunction((key) => rotating.get(key));
    const call = async (token: string) => {
      const request = { method: 'POST', uri: `/clusters/prod-eu-1/${token}/validate/inferenceservice`, querystring: {}, headers: {} };
      const result = await door({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '192.0.2.1' }, request });
      return 'statusCode' in result ? result.statusCode : 'passed';
    };

    expect([await call(newToken), await call(TOKEN), await call(OTHER_TOKEN)]).toEqual(['passed', 'passed', 403]);
  });

  it('stores a digest of the token, never the token', () => {
    const entry = frontDoorEntryOf('prod-eu-1', TOKEN);
    expect(entry).toEqual({ key: 'cluster/prod-eu-1', value: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(entry.value).not.toContain(TOKEN);
  });
});
