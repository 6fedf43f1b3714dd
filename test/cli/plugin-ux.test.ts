/**
 * The plugin's own plumbing: arguments as kubectl takes them, kubectl's connection flags,
 * `version`, completion in cobra's format, and the `-v` request log.
 */
import { describe, expect, it } from 'vitest';

import { connectOptionsOf, runApp, type AppDeps, type ConnectOptions } from '../../cli/app';
import { GLOBAL_FLAGS, parseArgs, stringFlag, stringsFlag, type FlagSpec } from '../../cli/args';
import { formatRequestLog, requestLogger } from '../../cli/request-log';
import { InferenceServices } from '../../cli/resources';
import { Resources } from '../../shared/domain/model/resources';
import { FakeCluster } from './fake-cluster';
import { driftedChat } from './fixtures';
import { createEnv } from './harness';

const SPECS: FlagSpec[] = [
  ...GLOBAL_FLAGS,
  { name: 'output', short: 'o', type: 'string', description: '' },
  { name: 'yes', type: 'boolean', description: '' },
];

describe('parseArgs', () => {
  it.each([
    [['-n', 'prod', 'x'], 'namespace', 'prod'],
    [['-nprod'], 'namespace', 'prod'],
    [['-n=prod'], 'namespace', 'prod'],
    [['--namespace=prod'], 'namespace', 'prod'],
    [['--namespace', 'prod'], 'namespace', 'prod'],
    [['-v=6'], 'v', '6'],
    [['--v', '8'], 'v', '8'],
    [['-o', 'json'], 'output', 'json'],
  ])('%j sets %s to %s', (argv, name, value) => {
    expect(stringFlag(parseArgs(argv, SPECS), name)).toBe(value);
  });

  it('keeps positionals around flags and after --', () => {
    expect(parseArgs(['runtime', '--yes', 'sync', 'chat', '--', '--not-a-flag'], SPECS).positionals).toEqual(['runtime', 'sync', 'chat', '--not-a-flag']);
  });

  it('collects a repeatable flag in order', () => {
    expect(stringsFlag(parseArgs(['--as-group', 'a', '--as-group=b'], SPECS), 'as-group')).toEqual(['a', 'b']);
  });

  it.each([
    [['--bogus'], 'unknown flag: --bogus'],
    [['-x'], "unknown shorthand flag: 'x' in -x"],
    [['--namespace'], 'flag needs an argument: --namespace'],
    [['--yes=maybe'], 'invalid argument "maybe" for "--yes" flag: must be true or false'],
  ])('rejects %j', (argv, message) => {
    expect(() => parseArgs(argv, SPECS)).toThrow(message);
  });

  it('reads --yes=false as false', () => {
    expect(parseArgs(['--yes=false'], SPECS).flags.get('yes')).toBe(false);
  });
});

describe('connection flags', () => {
  it('carries every kubectl connection flag to the connector', () => {
    const args = parseArgs(
      ['--server=https://10.0.0.1:6443', '--token', 't0k', '--user', 'u', '--cluster', 'c', '--as', 'system:serviceaccount:ns:sa', '--as-group', 'g1', '--as-group', 'g2', '--insecure-skip-tls-verify', '-v=6'],
      SPECS,
    );
    expect(connectOptionsOf(args)).toEqual<ConnectOptions>({
      server: 'https://10.0.0.1:6443',
      token: 't0k',
      user: 'u',
      cluster: 'c',
      impersonateUser: 'system:serviceaccount:ns:sa',
      impersonateGroups: ['g1', 'g2'],
      insecureSkipTlsVerify: true,
      requestTimeoutMs: 0,
      verbosity: 6,
    });
  });

  it('refuses a CA file together with --insecure-skip-tls-verify, as kubectl does', () => {
    const args = parseArgs(['--certificate-authority', '/ca.crt', '--insecure-skip-tls-verify'], SPECS);
    expect(() => connectOptionsOf(args)).toThrow('specifying a root certificates file with the insecure flag is not allowed');
  });

  it('refuses a level that is not a number', () => {
    expect(() => connectOptionsOf(parseArgs(['-v', 'loud'], SPECS))).toThrow('invalid argument "loud" for "-v, --v" flag: must be a number');
  });
});

function appDeps(cluster = new FakeCluster()) {
  const { env, out } = createEnv({ cluster });
  const connects: ConnectOptions[] = [];
  const deps: AppDeps = {
    io: env.io,
    connect: async (options) => {
      connects.push(options);
      return { client: cluster, contextName: 'prod-cluster', contextNamespace: 'prod' };
    },
    now: env.now,
    newRequestId: env.newRequestId,
    sleep: env.sleep,
    buildInfo: { version: '1.4.0', commit: '0123456789ab' },
  };
  return { deps, out, connects };
}

describe('version', () => {
  it('prints the plugin version, commit and Node version without connecting', async () => {
    const { deps, out, connects } = appDeps();
    expect(await runApp(['version'], deps)).toBe(0);
    expect(out.stdout).toBe(`Plugin Version: v1.4.0\nGit Commit: 0123456789ab\nNode Version: ${process.version}\n`);
    expect(connects).toHaveLength(0);
  });

  it('prints JSON with -o json', async () => {
    const { deps, out } = appDeps();
    expect(await runApp(['version', '-o', 'json'], deps)).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ pluginVersion: 'v1.4.0', gitCommit: '0123456789ab', nodeVersion: process.version });
  });

  it('lists version in the root help but not the completion entry', async () => {
    const { deps, out } = appDeps();
    expect(await runApp(['--help'], deps)).toBe(0);
    expect(out.stdout).toMatch(/\n {2}version +Print the plugin's version/);
    expect(out.stdout).not.toContain('__complete');
  });
});

describe('groups', () => {
  it.each([[['admin']], [['admin', 'cluster']], [['runtime']]])('%j alone lists its subcommands', async (argv) => {
    const { deps, out } = appDeps();
    expect(await runApp(argv, deps)).toBe(0);
    expect(out.stdout).toMatch(/^Usage:\n {2}kubectl ome \S+( \S+)? SUBCOMMAND \[flags\]\n\nSubcommands:\n/);
  });

  it('names the unknown subcommand of a group', async () => {
    const { deps, out } = appDeps();
    expect(await runApp(['admin', 'cluster', 'frob'], deps)).toBe(1);
    expect(out.stderr).toBe('error: unknown command "admin cluster frob"; see "kubectl ome admin cluster --help"\n');
  });
});

describe('completion', () => {
  const cluster = new FakeCluster();
  cluster.put(InferenceServices, driftedChat());
  cluster.put(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });

  it.each([
    [[''], ['runtime', 'rollout', 'wait', 'version', 'admin']],
    [['admin', 'cluster', ''], ['register', 'label', 'list', 'describe', 'deregister']],
    [['admin', 'cluster', 'register', 'edge-1', '--mode', ''], ['standalone', 'delegate']],
    [['ro'], ['rollout']],
    [['runtime', ''], ['sync', 'history', 'effective', 'show']],
    [['rollout', 'repin', '--d'], ['--dry-run']],
    [['rollout', 'repin', 'chat', '-o', 'y'], ['yaml']],
    [['rollout', 'repin', 'chat', '--output=j'], ['--output=json']],
    [['wait', 'chat', '--for', ''], ['runtime-sync=acknowledged']],
    [['rollout', 'explain', ''], ['chat']],
    [['rollout', 'explain', '-n', 'prod', 'c'], ['chat']],
    [['rollout', 'explain', 'chat', ''], []],
    [['runtime', 'sync', '-n', ''], ['prod']],
  ])('%j offers %j', async (words, candidates) => {
    const { deps, out } = appDeps(cluster);
    expect(await runApp(['__complete', ...words], deps)).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(':4');
    const offered = lines.slice(0, -1);
    for (const candidate of candidates) expect(offered).toContain(candidate);
    if (candidates.length === 0) expect(offered).toEqual([]);
  });

  it('offers registered cluster ids to admin cluster describe, from the table the words name', async () => {
    const { deps, out } = appDeps(cluster);
    const tables: string[] = [];
    deps.openRegistry = async (options) => {
      tables.push(options.tableName);
      const records = ['edge-1', 'prod-eu-1'].map((id) => ({ id, server: '', credentials: { kind: 'secret' as const }, omeNamespace: 'ome', mode: 'standalone' as const }));
      return {
        listClusters: async () => records,
        getCluster: async () => undefined,
        putCluster: async () => undefined,
        deleteCluster: async () => undefined,
        listCheckpoints: async () => [],
        readLease: async () => undefined,
        loadForwarderError: async () => undefined,
      };
    };
    expect(await runApp(['__complete', 'admin', 'cluster', 'describe', '--table', 'ome-pinning-prod', 'e'], deps)).toBe(0);
    expect(out.stdout).toBe('edge-1\n:4\n');
    expect(tables).toEqual(['ome-pinning-prod']);
  });

  it('offers nothing, rather than failing, when the cluster is unreachable', async () => {
    const { deps, out } = appDeps();
    deps.connect = async () => {
      throw new Error('no usable kubeconfig');
    };
    expect(await runApp(['__complete', 'runtime', 'sync', ''], deps)).toBe(0);
    expect(out.stdout).toBe(':4\n');
  });
});

describe('request log', () => {
  it('logs each request with its status at -v=6 and above, and nothing below', () => {
    const lines: string[] = [];
    const sink = { write: (text: string) => lines.push(text) };
    const now = () => new Date('2026-09-28T14:30:00.123Z');
    requestLogger(5, sink, now)?.({ method: 'GET', url: 'https://x/', status: 200, elapsedMs: 1 });
    expect(lines).toEqual([]);
    requestLogger(6, sink, now)?.({ method: 'PATCH', url: 'https://x/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat', status: 403, elapsedMs: 4 });
    expect(lines).toEqual(['I0928 14:30:00.123000 kubectl-ome] PATCH https://x/apis/ome.io/v1beta1/namespaces/prod/inferenceservices/chat 403 Forbidden in 4 milliseconds\n']);
    expect(formatRequestLog({ method: 'GET', url: 'https://x/', error: 'connect ECONNREFUSED', elapsedMs: 2 }, now())).toContain('GET https://x/ failed: connect ECONNREFUSED in 2 milliseconds');
  });
});
