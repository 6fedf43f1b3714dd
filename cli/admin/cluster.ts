/**
 * `kubectl ome admin cluster register|label|list|describe|deregister`: onboarding a cluster
 * to the plane in one command, labelling it for fleet selectors, and seeing and removing
 * what is registered. The cluster is the one kubectl's flags point at; the registry is the
 * functions' table (--table, --dynamodb-endpoint, --region, or TABLE_NAME,
 * DYNAMODB_ENDPOINT, AWS_REGION).
 */
import { isAbsolute, resolve } from 'node:path';

import { webhookKeyFromText, MIN_WEBHOOK_KEY_BYTES } from '../../shared/domain/webhook/webhook-token';
import { createFileFrontDoorStore, createKvsFrontDoorStore, type FrontDoorStore } from '../../shared/adapters/front-door';
import { forwarderLeaseKey } from '../../shared/use-cases/forwarder/forwarder-lease';
import type { ClusterCredentials, ClusterRecord } from '../../shared/ports/store';
import { DEFAULT_OME_NAMESPACE } from '../../shared/domain/vocabulary';
import { applyLabelEdit, formatLabels, parseClusterSelector, parseLabelEdits, parseLabelList, selectorMatches } from '../../shared/domain/fleet/cluster-labels';
import { booleanFlag, stringFlag, type FlagSpec, type ParsedArgs } from '../args';
import type { AppDeps, Command, Invocation, RegistryOptions } from '../command';
import { CliError } from '../errors';
import { formatStructured, formatTable, parseOutputFormat, type OutputFormat } from '../output';
import { loadOnboardingManifests } from './cluster-manifests';
import {
  checkClusterId,
  CLUSTER_MODES,
  deregisterCluster,
  eksAccessEntryCommands,
  parseClusterMode,
  registerCluster,
  type ClusterAdminRegistry,
  type RegisterInput,
  type Step,
} from './cluster-onboarding';

const CREDENTIAL_KINDS = ['kubeconfig-file', 'secret', 'eks'] as const;

/** Where the registry table is; `dashboard` takes the same flags. */
export const REGISTRY_FLAGS: FlagSpec[] = [
  { name: 'table', type: 'string', description: 'The registry table (default $TABLE_NAME)' },
  { name: 'dynamodb-endpoint', type: 'string', description: 'DynamoDB endpoint, such as npm start\'s DynamoDB Local (default $DYNAMODB_ENDPOINT)' },
  { name: 'region', type: 'string', description: 'AWS region of the table (default $AWS_REGION, then us-east-1)' },
];
const OUTPUT: FlagSpec = { name: 'output', short: 'o', type: 'string', description: 'Output format: table, json or yaml', default: 'table', values: ['table', 'json', 'yaml'] };

async function openRegistry(invocation: Invocation): Promise<ClusterAdminRegistry> {
  return openClusterRegistry(invocation.args, invocation.deps);
}

/** The registry the flags (else the environment) name. */
export async function openClusterRegistry(args: ParsedArgs, deps: AppDeps): Promise<ClusterAdminRegistry> {
  const env = deps.environment ?? {};
  const tableName = stringFlag(args, 'table') || env.TABLE_NAME;
  if (!tableName) throw new CliError('the registry table is unknown: pass --table or set TABLE_NAME');
  const endpoint = stringFlag(args, 'dynamodb-endpoint') || env.DYNAMODB_ENDPOINT;
  const options: RegistryOptions = {
    tableName,
    region: stringFlag(args, 'region') || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
  };
  if (!deps.openRegistry) throw new CliError('this build cannot reach the registry');
  return deps.openRegistry(options);
}

function outputOf(args: ParsedArgs): OutputFormat {
  const output = parseOutputFormat(stringFlag(args, 'output'));
  if (output === 'wide') throw new CliError('unsupported output format "wide"; use table, json or yaml');
  return output;
}

function oneId(invocation: Invocation, path: string): string {
  if (invocation.operands.length !== 1) throw new CliError(`exactly one cluster id is required; see "kubectl ome ${path} --help"`);
  return checkClusterId(invocation.operands[0]);
}

function formatSteps(steps: Step[]): string {
  return formatTable(
    ['KIND', 'NAME', 'ACTION', 'NOTE'],
    steps.map((step) => [step.kind, step.namespace ? `${step.namespace}/${step.name}` : step.name, step.action, step.note]),
  );
}

function printSteps(deps: AppDeps, steps: Step[], output: OutputFormat, extra: Record<string, unknown> = {}): void {
  if (output === 'json' || output === 'yaml') {
    deps.io.stdout.write(formatStructured({ steps, ...extra }, output));
  } else {
    deps.io.stdout.write(formatSteps(steps));
  }
}

async function readText(deps: AppDeps, path: string): Promise<Buffer> {
  if (!deps.readFile) throw new CliError('this build cannot read files');
  try {
    return await deps.readFile(path);
  } catch (error) {
    throw new CliError(`read ${path}: ${(error as Error).message}`, 1, { cause: error });
  }
}

function credentialsOf(args: ParsedArgs, kubeconfigPath: string | undefined, region: string): ClusterCredentials {
  const kind = stringFlag(args, 'credentials');
  if (!kind) throw new CliError(`--credentials is required: ${CREDENTIAL_KINDS.join(', ')}`);
  if (kind === 'secret') return { kind: 'secret' };
  if (kind === 'eks') {
    const clusterName = stringFlag(args, 'eks-cluster');
    if (!clusterName) throw new CliError('--credentials=eks needs --eks-cluster NAME');
    return { kind: 'eks', clusterName, region };
  }
  if (kind === 'kubeconfig-file') {
    const path = stringFlag(args, 'credentials-file') || kubeconfigPath;
    if (!path) throw new CliError('--credentials=kubeconfig-file needs --credentials-file FILE (the kubeconfig the plane reads)');
    const context = stringFlag(args, 'credentials-context');
    return { kind: 'kubeconfig-file', path: isAbsolute(path) ? path : resolve(path), ...(context ? { context } : {}) };
  }
  throw new CliError(`invalid argument "${kind}" for "--credentials" flag: must be ${CREDENTIAL_KINDS.join(', ')}`);
}

async function webhookOf(deps: AppDeps, args: ParsedArgs): Promise<RegisterInput['webhook']> {
  const baseUrl = stringFlag(args, 'webhook-url');
  if (!baseUrl) {
    if (booleanFlag(args, 'skip-webhook')) return undefined;
    throw new CliError('--webhook-url is required (the stack\'s AdmissionWebhookUrl, or npm start\'s webhook); --skip-webhook installs none');
  }
  if (!/^https?:\/\/[^/]+\/?$/.test(baseUrl)) throw new CliError('--webhook-url must be the endpoint without a path, such as https://abc.lambda-url.eu-west-1.on.aws');
  const keyFile = stringFlag(args, 'webhook-key-file');
  if (!keyFile) throw new CliError('--webhook-key-file is required with --webhook-url (the stack\'s admission-webhook-key secret, or npm start\'s <data-dir>/admission-webhook-key)');
  const key = webhookKeyFromText((await readText(deps, keyFile)).toString('utf8'));
  if (!key) throw new CliError(`the webhook key in ${keyFile} must be at least ${MIN_WEBHOOK_KEY_BYTES} bytes`);
  const caFile = stringFlag(args, 'webhook-ca-file');
  const policy = stringFlag(args, 'webhook-failure-policy');
  if (policy !== undefined && policy !== 'Fail' && policy !== 'Ignore') throw new CliError('--webhook-failure-policy must be Fail or Ignore');
  const frontDoor = frontDoorOf(args);
  return {
    baseUrl,
    key,
    ...(caFile ? { caBundle: (await readText(deps, caFile)).toString('base64') } : {}),
    ...(policy ? { failurePolicy: policy } : {}),
    ...(frontDoor ? { frontDoor } : {}),
  };
}

/** The store of the webhook's front door: the stack's key value store, or `npm start`'s file. */
function frontDoorOf(args: ParsedArgs): FrontDoorStore | undefined {
  const kvs = stringFlag(args, 'front-door-kvs');
  const file = stringFlag(args, 'front-door-file');
  if (kvs && file) throw new CliError('--front-door-kvs and --front-door-file name two stores: give one');
  if (kvs) {
    if (!/^arn:aws[a-z-]*:cloudfront::\d{12}:key-value-store\/[0-9a-f-]+$/.test(kvs)) {
      throw new CliError('--front-door-kvs must be the ARN of a CloudFront KeyValueStore (the stack\'s AdmissionFrontDoorStoreArn output), such as arn:aws:cloudfront::123456789012:key-value-store/0f1e2d3c-...');
    }
    return createKvsFrontDoorStore(kvs);
  }
  return file ? createFileFrontDoorStore(isAbsolute(file) ? file : resolve(file)) : undefined;
}

const FRONT_DOOR_FLAGS: FlagSpec[] = [
  { name: 'front-door-kvs', type: 'string', description: 'The ARN of the webhook front door\'s CloudFront KeyValueStore (the stack\'s AdmissionFrontDoorStoreArn): the cluster\'s token digest is written there, with the AWS CLI' },
  { name: 'front-door-file', type: 'string', description: 'npm start\'s front door store (<data-dir>/front-door.json), in place of --front-door-kvs' },
];

const REGISTER: Command = {
  path: 'admin cluster register',
  summary: 'Onboard the current cluster: CRDs, RBAC, the webhook and the registry record',
  usage: 'kubectl ome admin cluster register CLUSTER_ID --mode standalone|delegate --credentials kubeconfig-file|secret|eks [flags]',
  description:
    'Installs into the cluster kubectl points at: the CRDs of infra/crds when absent, the plane\'s namespace\n' +
    '(infra/k8s/namespace.yaml), every infra/k8s/rbac-*.yaml and policy-*.yaml, and the ValidatingWebhookConfiguration\n' +
    'with this cluster\'s URLs and token. Then writes the registry record (last, so the plane never serves a\n' +
    'cluster lacking its permissions). With --credentials=eks it prints the aws eks create-access-entry commands\n' +
    'for the functions\' roles.',
  flags: [
    { name: 'mode', type: 'string', description: 'Required: standalone (the plane runs pinning and rollouts) or delegate (OME\'s controller does)', values: CLUSTER_MODES },
    { name: 'credentials', type: 'string', description: 'How functions reach the cluster: kubeconfig-file (npm start only), secret or eks', values: CREDENTIAL_KINDS },
    { name: 'credentials-file', type: 'string', description: 'kubeconfig-file: the kubeconfig the plane reads (default --kubeconfig)' },
    { name: 'credentials-context', type: 'string', description: 'kubeconfig-file: the context to use when the file has none named after a function' },
    { name: 'eks-cluster', type: 'string', description: 'eks: the EKS cluster name' },
    { name: 'stack', type: 'string', description: 'eks: the deployed stack whose function roles get access entries', default: 'ome-pinning-dev' },
    { name: 'ome-namespace', type: 'string', description: 'OME\'s namespace in the cluster', default: DEFAULT_OME_NAMESPACE },
    { name: 'webhook-url', type: 'string', description: 'The admission webhook endpoint, without a path' },
    { name: 'webhook-key-file', type: 'string', description: 'File holding the webhook key the cluster\'s token derives from' },
    { name: 'webhook-ca-file', type: 'string', description: 'PEM CA of the webhook endpoint, when not publicly trusted' },
    { name: 'webhook-failure-policy', type: 'string', description: 'Fail (default, as the template) or Ignore', values: ['Fail', 'Ignore'] },
    ...FRONT_DOOR_FLAGS,
    { name: 'skip-webhook', type: 'boolean', description: 'Install no webhook' },
    { name: 'without-policy', type: 'boolean', description: 'Register even where the API server cannot take the admission policies (Kubernetes before 1.30); the plane\'s identities are then held by RBAC alone' },
    { name: 'labels', type: 'string', description: 'The cluster\'s labels, key=value pairs separated by commas (env=prod,region=eu), for fleet selectors; without it a re-register keeps the record\'s labels' },
    ...REGISTRY_FLAGS,
    OUTPUT,
  ],
  async run(invocation) {
    const { args, deps } = invocation;
    const id = oneId(invocation, this.path);
    const mode = parseClusterMode(stringFlag(args, 'mode'));
    const output = outputOf(args);
    const labelsFlag = stringFlag(args, 'labels');
    const labels = labelsFlag === undefined ? undefined : parseLabelList(labelsFlag);
    const registryRegion = stringFlag(args, 'region') || deps.environment?.AWS_REGION || 'us-east-1';
    const webhook = await webhookOf(deps, args);
    const manifests = await loadOnboardingManifests();
    const registry = await openRegistry(invocation);
    const { connection } = await invocation.connect();
    if (!connection.admin) throw new CliError('this build cannot write to the cluster');
    const credentials = credentialsOf(args, connection.kubeconfigPath, registryRegion);
    const keptLabels = labels ?? (await registry.getCluster(id))?.labels;
    const steps = await registerCluster(connection.admin, registry, manifests, {
      id,
      mode,
      server: connection.server ?? '',
      ...(connection.caData ? { caData: connection.caData } : {}),
      credentials,
      omeNamespace: stringFlag(args, 'ome-namespace') || DEFAULT_OME_NAMESPACE,
      ...(keptLabels ? { labels: keptLabels } : {}),
      ...(webhook ? { webhook } : {}),
      withoutPolicy: booleanFlag(args, 'without-policy'),
    });
    const accessEntries =
      credentials.kind === 'eks'
        ? eksAccessEntryCommands(manifests, { clusterName: credentials.clusterName, region: credentials.region, stack: stringFlag(args, 'stack') || 'ome-pinning-dev' })
        : [];
    printSteps(deps, steps, output, accessEntries.length > 0 ? { eksAccessEntryCommands: accessEntries } : {});
    if (output === 'table' && accessEntries.length > 0) {
      deps.io.stdout.write(`\nMap each function's role to its group (the cluster's authentication mode must allow access entries):\n${accessEntries.join('\n')}\n`);
    }
    if (credentials.kind === 'secret' && output === 'table') {
      // The token goes only to the server the secret names, so the secret must carry it.
      deps.io.stdout.write(
        `\nEach function reads its Secrets Manager secret <CLUSTER_SECRET_PREFIX>${id}/<function>, holding {"token": ..., "server": "${connection.server ?? ''}", "caData": ...}: ` +
          `the token is sent only to the server the secret names (docs/operations.md, "Secret records").\n`,
      );
    }
    return 0;
  },
};

function credentialSummary(credentials: ClusterCredentials): string {
  if (credentials.kind === 'eks') return `eks ${credentials.clusterName} (${credentials.region})`;
  if (credentials.kind === 'kubeconfig-file') return `kubeconfig-file ${credentials.path}${credentials.context ? ` context ${credentials.context}` : ''}`;
  return credentials.kind;
}

function modeOf(record: ClusterRecord): string {
  return (record as ClusterRecord & { mode?: string }).mode ?? '';
}

const LIST: Command = {
  path: 'admin cluster list',
  summary: 'List the registered clusters',
  usage: 'kubectl ome admin cluster list [-l SELECTOR] [--show-labels] [flags]',
  description: 'Lists the clusters in the registry table, by id; with -l, those whose labels match the selector (as kubectl get -l).',
  flags: [
    { name: 'selector', short: 'l', type: 'string', description: 'Only the clusters whose labels match: env=prod,region=eu, env!=lab, tier in (a,b), !canary' },
    { name: 'show-labels', type: 'boolean', description: 'Add a LABELS column' },
    ...REGISTRY_FLAGS,
    OUTPUT,
  ],
  async run(invocation) {
    if (invocation.operands.length > 0) throw new CliError('admin cluster list takes no arguments');
    const output = outputOf(invocation.args);
    const selector = parseClusterSelector(stringFlag(invocation.args, 'selector') ?? '');
    const records = (await (await openRegistry(invocation)).listClusters()).filter((record) => selectorMatches(selector, record.labels));
    if (output === 'json' || output === 'yaml') {
      invocation.deps.io.stdout.write(formatStructured({ items: records.map(redact) }, output));
      return 0;
    }
    if (records.length === 0 && selector.requirements.length > 0) {
      invocation.deps.io.stderr.write(`No clusters match the selector "${selector.text}".\n`);
      return 0;
    }
    const showLabels = booleanFlag(invocation.args, 'show-labels');
    invocation.deps.io.stdout.write(
      formatTable(
        ['ID', 'MODE', 'SERVER', 'CREDENTIALS', 'OME-NAMESPACE', ...(showLabels ? ['LABELS'] : [])],
        records.map((record) => [record.id, modeOf(record), record.server, credentialSummary(record.credentials), record.omeNamespace, ...(showLabels ? [formatLabels(record.labels)] : [])]),
      ),
    );
    return 0;
  },
};

const LABEL: Command = {
  path: 'admin cluster label',
  operand: 'cluster',
  summary: 'Set or remove labels on a registered cluster\'s record',
  usage: 'kubectl ome admin cluster label CLUSTER_ID KEY=VALUE ... KEY- ... [--overwrite] [flags]',
  description:
    'Edits the labels fleet selectors choose clusters by (kubectl ome admin fleet sync --selector), as kubectl label\n' +
    'does: KEY=VALUE sets a label, KEY- removes one, and changing a value needs --overwrite. Only the record\n' +
    'changes; nothing in the cluster does.',
  flags: [{ name: 'overwrite', type: 'boolean', description: 'Allow a label that has a value to take another' }, ...REGISTRY_FLAGS, OUTPUT],
  async run(invocation) {
    const [first, ...words] = invocation.operands;
    if (first === undefined || words.length === 0) throw new CliError(`a cluster id and at least one KEY=VALUE or KEY- are required; see "kubectl ome ${this.path} --help"`);
    const id = checkClusterId(first);
    const output = outputOf(invocation.args);
    const edit = parseLabelEdits(words);
    const registry = await openRegistry(invocation);
    const record = await registry.getCluster(id);
    if (!record) throw new CliError(`cluster "${id}" is not registered`);
    const labels = applyLabelEdit(record.labels ?? {}, edit, booleanFlag(invocation.args, 'overwrite'));
    const changed = formatLabels(labels) !== formatLabels(record.labels);
    if (changed) {
      const next: ClusterRecord = { ...record, labels };
      if (Object.keys(labels).length === 0) delete next.labels;
      await registry.putCluster(next);
    }
    if (output === 'json' || output === 'yaml') {
      invocation.deps.io.stdout.write(formatStructured({ id, labels, changed }, output));
      return 0;
    }
    invocation.deps.io.stdout.write(`cluster/${id} ${changed ? 'labeled' : 'not labeled'}\n`);
    return 0;
  },
};

/** A `kubeconfig` record holds credentials inline: never print them. */
function redact(record: ClusterRecord): ClusterRecord {
  if (record.credentials.kind !== 'kubeconfig') return record;
  return { ...record, credentials: { ...record.credentials, kubeconfig: '<redacted>' } };
}

function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return `${hours ? `${hours}h` : ''}${hours || minutes ? `${minutes}m` : ''}${seconds}s`;
}

const DESCRIBE: Command = {
  path: 'admin cluster describe',
  operand: 'cluster',
  summary: 'Show a registered cluster, its forwarder lag and checkpoints',
  usage: 'kubectl ome admin cluster describe CLUSTER_ID [flags]',
  description:
    'Shows the record, who holds the forwarder lease (its shard\'s, the one the newest checkpoint was written under),\nthe forwarder\'s last warning or error, and each watched resource\'s last checkpoint: its ' +
    'resourceVersion and when it was written. Forwarder lag is the age of the oldest checkpoint: how far the\n' +
    'slowest stream may be behind.',
  flags: [...REGISTRY_FLAGS, OUTPUT],
  async run(invocation) {
    const id = oneId(invocation, this.path);
    const output = outputOf(invocation.args);
    const registry = await openRegistry(invocation);
    const record = await registry.getCluster(id);
    if (!record) throw new CliError(`cluster "${id}" is not registered`);
    const now = invocation.deps.now().getTime();
    const checkpoints = (await registry.listCheckpoints(id)).sort((a, b) => a.resource.localeCompare(b.resource));
    // The shard count is the deployment's: the newest checkpoint names the lease it was written under.
    const newestCheckpoint = checkpoints.reduce<(typeof checkpoints)[number] | undefined>((found, checkpoint) => (!found || checkpoint.updatedAt > found.updatedAt ? checkpoint : found), undefined);
    const leaseKey = newestCheckpoint?.leaseKey ?? forwarderLeaseKey(id);
    const lease = await registry.readLease(leaseKey);
    const lastError = await registry.loadForwarderError(id);
    const oldest = checkpoints.length > 0 ? Math.min(...checkpoints.map((checkpoint) => checkpoint.updatedAt)) : undefined;
    const newest = checkpoints.length > 0 ? Math.max(...checkpoints.map((checkpoint) => checkpoint.updatedAt)) : undefined;
    const leaseText = !lease?.holder
      ? 'free (no forwarder running)'
      : `${leaseKey} held by ${lease.holder}, ${lease.expiresAt > now ? `renewed, expires in ${durationText(lease.expiresAt - now)}` : `expired ${durationText(now - lease.expiresAt)} ago`}`;
    const report = {
      record: redact(record),
      forwarder: {
        lease: lease ? { key: leaseKey, ...lease, expiresAt: new Date(lease.expiresAt).toISOString() } : null,
        lagMilliseconds: oldest === undefined ? null : now - oldest,
        lastCheckpointAt: newest === undefined ? null : new Date(newest).toISOString(),
        lastError: lastError ? { message: lastError.message, at: new Date(lastError.at).toISOString() } : null,
        checkpoints: checkpoints.map((checkpoint) => ({ ...checkpoint, updatedAt: new Date(checkpoint.updatedAt).toISOString() })),
      },
    };
    if (output === 'json' || output === 'yaml') {
      invocation.deps.io.stdout.write(formatStructured(report, output));
      return 0;
    }
    const rows: Array<[string, string]> = [
      ['ID', record.id],
      ['Mode', modeOf(record)],
      ['Server', record.server],
      ['Credentials', credentialSummary(record.credentials)],
      ['OME namespace', record.omeNamespace],
      ['Labels', formatLabels(record.labels)],
      ['Forwarder lease', leaseText],
      ['Forwarder lag', oldest === undefined ? 'no checkpoint yet (never listed)' : durationText(now - oldest)],
      ['Last checkpoint', newest === undefined ? '' : new Date(newest).toISOString()],
      ['Last error', lastError ? `${new Date(lastError.at).toISOString()} ${lastError.message}` : 'none recorded'],
      ...checkpoints.map((checkpoint): [string, string] => [
        `Checkpoint ${checkpoint.resource}`,
        `resourceVersion ${checkpoint.resourceVersion}, ${durationText(now - checkpoint.updatedAt)} ago`,
      ]),
    ];
    invocation.deps.io.stdout.write(formatTable(['FIELD', 'VALUE'], rows));
    return 0;
  },
};

const DEREGISTER: Command = {
  path: 'admin cluster deregister',
  operand: 'cluster',
  summary: 'Remove a cluster: its record and checkpoints, the webhook and the RBAC register installed',
  usage: 'kubectl ome admin cluster deregister CLUSTER_ID --yes [--delete-crds] [flags]',
  description:
    'Deletes the registry record and the cluster\'s checkpoints (the plane stops serving it), then, in the cluster\n' +
    'kubectl points at, the webhook configuration and every object of infra/k8s/rbac-*.yaml and policy-*.yaml.\n' +
    'CRDs stay: deleting a CRD deletes every object of its kind. --delete-crds removes those register installed.\n' +
    'With --front-door-kvs (or --front-door-file), the cluster\'s front door entry goes first: its calls stop at the edge.',
  flags: [
    { name: 'yes', type: 'boolean', description: 'Confirm; required' },
    { name: 'delete-crds', type: 'boolean', description: 'Also delete the CRDs register installed (and every object of their kinds)' },
    ...FRONT_DOOR_FLAGS,
    ...REGISTRY_FLAGS,
    OUTPUT,
  ],
  async run(invocation) {
    const id = oneId(invocation, this.path);
    const output = outputOf(invocation.args);
    if (!booleanFlag(invocation.args, 'yes')) throw new CliError(`deregister removes cluster "${id}" from the plane and its RBAC from the cluster; pass --yes to confirm`);
    const manifests = await loadOnboardingManifests();
    const registry = await openRegistry(invocation);
    const { connection } = await invocation.connect();
    if (!connection.admin) throw new CliError('this build cannot write to the cluster');
    const frontDoor = frontDoorOf(invocation.args);
    const steps = await deregisterCluster(connection.admin, registry, manifests, { id, deleteCrds: booleanFlag(invocation.args, 'delete-crds'), ...(frontDoor ? { frontDoor } : {}) });
    printSteps(invocation.deps, steps, output);
    return 0;
  },
};

export const ADMIN_CLUSTER_COMMANDS: Command[] = [REGISTER, LABEL, LIST, DESCRIBE, DEREGISTER];
