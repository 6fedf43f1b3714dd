import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runWebhookConfigCommand, USAGE } from '../../scripts/webhook-config';
import { parseWebhookPath, deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import { WebhookName } from '../../shared/domain/vocabulary';

const KEY = 'webhook-config-key-0123456789abcdefghijklmnop';
const BASE = 'https://abc123.lambda-url.eu-west-1.on.aws';

async function run(argv: string[], stdin = `${KEY}\n`) {
  let stdout = '';
  let stderr = '';
  const code = await runWebhookConfigCommand(argv, {
    stdin: async () => stdin,
    readFile: (path) => (path === 'key.txt' ? Promise.resolve(KEY) : readFile(path, 'utf8')),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

describe('npm run webhook-config', () => {
  it("prints the cluster's configuration with its token in each URL, and never the key", async () => {
    // Act
    const result = await run(['--cluster', 'prod-eu-1', '--url', BASE]);

    // Assess
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(KEY);
    const configuration = parse(result.stdout) as { kind: string; webhooks: Array<{ name: string; failurePolicy: string; clientConfig: Record<string, string> }> };
    expect(configuration.kind).toBe('ValidatingWebhookConfiguration');
    const token = deriveWebhookToken(Buffer.from(KEY), 'prod-eu-1');
    expect(configuration.webhooks.map((webhook) => [webhook.name, webhook.failurePolicy, webhook.clientConfig])).toEqual([
      [WebhookName.inferenceService, 'Fail', { url: `${BASE}/clusters/prod-eu-1/${token}/validate/inferenceservice` }],
      [WebhookName.controllerRevisionImmutability, 'Fail', { url: `${BASE}/clusters/prod-eu-1/${token}/validate/controllerrevision` }],
    ]);
    for (const webhook of configuration.webhooks) {
      expect(parseWebhookPath(new URL(webhook.clientConfig.url ?? '').pathname)).toMatchObject({ kind: 'route', clusterId: 'prod-eu-1', token });
    }
  });

  it('prints only the URLs with --urls, reads --key-file, and sets another failure policy', async () => {
    // Act
    const urls = await run(['--cluster', 'c', '--url', `${BASE}/`, '--key-file', 'key.txt', '--urls'], '');
    const ignoring = await run(['--cluster', 'c', '--url', BASE, '--failure-policy', 'Ignore']);

    // Assess
    const token = deriveWebhookToken(Buffer.from(KEY), 'c');
    expect(urls).toEqual({ code: 0, stderr: '', stdout: `${BASE}/clusters/c/${token}/validate/inferenceservice\n${BASE}/clusters/c/${token}/validate/controllerrevision\n` });
    expect((parse(ignoring.stdout) as { webhooks: Array<{ failurePolicy: string }> }).webhooks.map((webhook) => webhook.failurePolicy)).toEqual(['Ignore', 'Ignore']);
  });

  it("prints the cluster's front door entry with --front-door-entry: its key and its token's SHA-256, never the token", async () => {
    // Act
    const entry = await run(['--cluster', 'prod-eu-1', '--url', BASE, '--front-door-entry']);

    // Assess
    const token = deriveWebhookToken(Buffer.from(KEY), 'prod-eu-1');
    expect(entry).toEqual({ code: 0, stderr: '', stdout: `cluster/prod-eu-1 ${createHash('sha256').update(token).digest('hex')}\n` });
    expect(entry.stdout).not.toContain(token);
  });

  it("puts the revision webhook on the cluster's OME namespace: ome by default, --ome-namespace otherwise", async () => {
    const selectors = async (argv: string[]) =>
      (parse((await run(['--cluster', 'c', '--url', BASE, ...argv])).stdout) as { webhooks: Array<{ namespaceSelector?: unknown }> }).webhooks.map((webhook) => webhook.namespaceSelector);

    expect(await selectors([])).toEqual([undefined, { matchLabels: { 'kubernetes.io/metadata.name': 'ome' } }]);
    expect(await selectors(['--ome-namespace', 'ome-system'])).toEqual([undefined, { matchLabels: { 'kubernetes.io/metadata.name': 'ome-system' } }]);
  });

  it.each([
    [['--url', BASE], 2, '--cluster is required'],
    [['--cluster', 'c'], 2, '--url is required'],
    [['--cluster', 'c', '--url', `${BASE}/clusters/c/validate`], 2, '--url must be the endpoint without a path'],
    [['--cluster', 'c', '--url', BASE, '--failure-policy', 'fail'], 2, '--failure-policy must be Fail or Ignore'],
    [['--cluster', 'c', '--url', BASE, '--bogus'], 2, "Unknown option '--bogus'"],
  ])('refuses %j with exit %i', async (argv, code, message) => {
    const result = await run(argv);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain(USAGE);
    expect(result.stdout).toBe('');
  });

  it('refuses a key shorter than 32 bytes', async () => {
    const result = await run(['--cluster', 'c', '--url', BASE], 'short\n');
    expect(result).toEqual({ code: 1, stdout: '', stderr: "the webhook key must be at least 32 bytes; pass the secret's value on standard input or with --key-file\n" });
  });
});
