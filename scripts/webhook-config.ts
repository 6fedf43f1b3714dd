/**
 * `npm run -s webhook-config`: one cluster's ValidatingWebhookConfiguration, rendered from
 * infra/k8s/webhook.yaml.tmpl with the cluster's authenticated URLs, for `kubectl apply -f -`.
 * The webhook key comes from standard input (or --key-file) and is never printed; what is
 * printed holds the cluster's token, so treat it as a credential of that cluster.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../infra/paths';
import { renderWebhookConfiguration } from '../shared/use-cases/admission/webhook-configuration';
import { deriveWebhookToken, frontDoorEntryOf, MIN_WEBHOOK_KEY_BYTES, webhookKeyFromText } from '../shared/domain/webhook/webhook-token';
import { DEFAULT_OME_NAMESPACE } from '../shared/domain/vocabulary';

export const USAGE = `Usage: npm run -s webhook-config -- --cluster ID --url URL [options] < KEY

Prints the ValidatingWebhookConfiguration of cluster ID, its URLs under URL (the stack's
AdmissionWebhookUrl) with the cluster's token. The webhook key is read from standard input:

  aws secretsmanager get-secret-value --secret-id ome-pinning/<stage>/admission-webhook-key \\
    --query SecretString --output text \\
  | npm run -s webhook-config -- --cluster prod-eu-1 --url https://<id>.lambda-url.<region>.on.aws \\
  | kubectl apply -f -

Options:
  --cluster ID               the id the cluster is registered under
  --url URL                  the webhook endpoint, without a path
  --ome-namespace NS         OME's namespace in the cluster, as its registry record says
                             (default ome): the revisions the immutability webhook guards
  --key-file FILE            read the key from FILE instead of standard input
  --failure-policy POLICY    Fail (default, as the template) or Ignore
  --urls                     print only the two URLs
  --front-door-entry         print only the cluster's front door entry: its key and value
                             (the SHA-256 of its token), for aws cloudfront-keyvaluestore put-key
  -h, --help                 show this help
`;

export interface CommandIo {
  stdin(): Promise<string>;
  readFile(path: string): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Runs the command; returns the exit code (2 for a usage error, 1 for a bad key or template). */
export async function runWebhookConfigCommand(argv: string[], io: CommandIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        cluster: { type: 'string' },
        url: { type: 'string' },
        'key-file': { type: 'string' },
        'ome-namespace': { type: 'string' },
        'failure-policy': { type: 'string' },
        urls: { type: 'boolean' },
        'front-door-entry': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const policy = values['failure-policy'];
  const problem =
    (!values.cluster && '--cluster is required') ||
    (!values.url && '--url is required') ||
    (values.url && !/^https?:\/\/[^/]+\/?$/.test(values.url) && '--url must be the endpoint without a path, such as https://abc.lambda-url.eu-west-1.on.aws') ||
    (policy !== undefined && policy !== 'Fail' && policy !== 'Ignore' && '--failure-policy must be Fail or Ignore');
  if (problem || !values.cluster || !values.url) {
    io.stderr(`${problem}\n\n${USAGE}`);
    return 2;
  }
  const key = webhookKeyFromText(values['key-file'] ? await io.readFile(values['key-file']) : await io.stdin());
  if (!key) {
    io.stderr(`the webhook key must be at least ${MIN_WEBHOOK_KEY_BYTES} bytes; pass the secret's value on standard input or with --key-file\n`);
    return 1;
  }
  const configuration = renderWebhookConfiguration(await io.readFile(WEBHOOK_CONFIGURATION_TEMPLATE), {
    baseUrl: values.url,
    clusterId: values.cluster,
    omeNamespace: values['ome-namespace'] ?? DEFAULT_OME_NAMESPACE,
    token: deriveWebhookToken(key, values.cluster),
    ...(policy === 'Fail' || policy === 'Ignore' ? { failurePolicy: policy } : {}),
  });
  if (values['front-door-entry']) {
    const entry = frontDoorEntryOf(values.cluster, deriveWebhookToken(key, values.cluster));
    io.stdout(`${entry.key} ${entry.value}\n`);
  } else if (values.urls) {
    const webhooks = configuration.webhooks as Array<{ clientConfig: { url: string } }>;
    io.stdout(webhooks.map((webhook) => `${webhook.clientConfig.url}\n`).join(''));
  } else {
    io.stdout(stringify(configuration));
  }
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runWebhookConfigCommand(process.argv.slice(2), {
    stdin: readStdin,
    readFile: (path) => readFile(path, 'utf8'),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`webhook-config failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
