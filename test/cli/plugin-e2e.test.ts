/**
 * The real `kubectl ome …`: kubectl finds bin/kubectl-ome on PATH and the plugin talks to
 * an embedded API server through a kubeconfig, as a user's shell would.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { driftedChat } from './fixtures';
import { driftedLlama, OLD_REVISION, seedRevision, seedRuntime } from './runtime-fixtures';

const BIN = resolve(__dirname, '../../bin');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let cluster: EmbeddedCluster;
let dir: string;
let kubeconfig: string;

function kubectl(...args: string[]): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      'kubectl',
      args,
      { env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig }, timeout: 50_000 },
      (error, stdout, stderr) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** Creates the object, then writes its status as the controller would have. */
async function seed<T extends KubeObject>(type: (typeof Resources)[keyof typeof Resources], object: T): Promise<T> {
  const { status, ...rest } = object as T & { status?: unknown };
  const created = await cluster.client.create<T>(type, rest as T);
  if (status === undefined) return created;
  const observed = { ...(status as Record<string, unknown>) };
  if ('observedGeneration' in observed) observed.observedGeneration = created.metadata.generation;
  return cluster.client.replaceStatus<T>(type, { ...created, status: observed } as T);
}

function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
  dir = await mkdtemp(join(tmpdir(), 'kubectl-ome-'));
  kubeconfig = join(dir, 'kubeconfig');
  // The seed's follow-up command names the context; call it what the seed's reader uses.
  await writeFile(kubeconfig, cluster.kubeconfig.replaceAll('embedded', 'prod-cluster'), { mode: 0o600 });
  for (const name of ['prod', 'llama-demo']) {
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const chat = driftedChat();
  const { uid: _uid, resourceVersion: _rv, generation: _gen, ...meta } = chat.metadata;
  const run = chat.status?.rollout?.activeRun;
  if (run) run.openedAt = run.pinnedAt = minutesAgo(30);
  for (const condition of chat.status?.conditions ?? []) condition.lastTransitionTime = minutesAgo(10);
  await seed(Resources.inferenceServices, { ...chat, metadata: meta });

  await seed(Resources.servingRuntimes, { ...seedRuntime('0.85'), metadata: { name: 'sglang-llama-3-2-3b', namespace: 'llama-demo' } });
  const { uid: _u, ...revisionMeta } = seedRevision('0.9', '').metadata;
  delete revisionMeta.creationTimestamp;
  await cluster.client.create(Resources.controllerRevisions, { ...seedRevision('0.9', ''), metadata: revisionMeta });
  const llama = driftedLlama();
  await seed(Resources.inferenceServices, { ...llama, metadata: { name: llama.metadata.name, namespace: 'llama-demo' } });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kubectl ome against an embedded cluster', () => {
  it('repins the drifted run and prints the seed result', async () => {
    const result = await kubectl('ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes');
    expect(result.stderr).toContain('ALPHA guarded rollout repin (not controller convergence)');
    expect(result.stdout).toBe(`FIELD                   VALUE
action                  rollout repin
target                  InferenceService/prod/chat
dry-run                 none
accepted                Yes
applied                 Yes
run-id                  chat-0123456789ab
pinned-plan-digest      rp1:56fe0ddd6edd
requested-plan-digest   rp1:1d153db2a5df
group-count             1
message                 API accepted repin annotation; controller consumption...
follow-up               kubectl ome rollout explain chat -n prod --context=pr...
hint                    Use -o json or -o yaml for full values.
`);
    expect(result.code).toBe(0);
    const annotation = await kubectl('get', 'inferenceservice', 'chat', '-n', 'prod', '-o', 'jsonpath={.metadata.annotations.ome\\.io/rollout-repin}');
    expect(annotation.stdout).toBe('rp1:1d153db2a5df');

    const again = await kubectl('ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('error: rollout repin refused: a rollout action mailbox is already present\n');
  });

  it('refuses without a terminal unless --yes', async () => {
    const result = await kubectl('ome', 'runtime', 'sync', 'llama-3-2-3b-instruct', '-n', 'llama-demo');
    expect(result.code).toBe(1);
    expect(result.stderr.endsWith('error: action not confirmed; noninteractive input requires --yes\n')).toBe(true);
    expect(result.stdout).toBe('');
  });

  it('shows the effective runtime and syncs it, then waits for the acknowledgement', async () => {
    const effective = await kubectl('ome', 'runtime', 'show', 'llama-3-2-3b-instruct', '-n', 'llama-demo');
    expect(effective.code).toBe(0);
    expect(effective.stdout).toContain(`Active    REVISION        ${OLD_REVISION}\n`);
    expect(effective.stdout).toContain('Service   DRIFT           ReportedTrue/RevisionMismatch\n');

    const sync = await kubectl('ome', 'runtime', 'sync', 'llama-3-2-3b-instruct', '-n', 'llama-demo', '--yes', '-o', 'json');
    expect(sync.code).toBe(0);
    const result = JSON.parse(sync.stdout) as { requestID: string; revisionHash: string; applied: boolean };
    expect(result).toMatchObject({ revisionHash: 'af9539ac', applied: true });

    const wait = await kubectl(
      'ome', 'wait', 'llama-3-2-3b-instruct', '-n', 'llama-demo',
      '--for=runtime-sync=acknowledged', `--request-id=${result.requestID}`, '--timeout=1s', '--poll-interval=200ms',
    );
    expect(wait.code).toBe(2);
    expect(wait.stdout).toContain('Token state            Pending\n');
  });

  it('maps an unreachable server to the fixed access message', async () => {
    const result = await kubectl('ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', '--kubeconfig', join(dir, 'missing'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: /);
  });
});
