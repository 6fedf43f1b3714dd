/** String buffers and a fixed clock for running command functions in tests. */
import type { CliIO, CommandEnv } from '../../cli/env';
import { FakeCluster } from './fake-cluster';

export interface Buffers {
  stdout: string;
  stderr: string;
}

export function createEnv(
  options: { cluster?: FakeCluster; answers?: string[]; tty?: boolean; now?: Date; contextName?: string; ids?: string[] } = {},
): { env: CommandEnv; out: Buffers; cluster: FakeCluster; sleeps: number[] } {
  const cluster = options.cluster ?? new FakeCluster();
  const out: Buffers = { stdout: '', stderr: '' };
  const answers = [...(options.answers ?? [])];
  const ids = [...(options.ids ?? ['3f0c9a52-8d1e-4b7a-9c65-2e4f1d7b8a90'])];
  const sleeps: number[] = [];
  let clock = (options.now ?? new Date('2026-09-28T14:30:00Z')).getTime();
  const io: CliIO = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
    stdin: { isTTY: options.tty ?? answers.length > 0, readLine: async () => answers.shift() ?? null },
  };
  const env: CommandEnv = {
    client: cluster,
    io,
    contextName: options.contextName ?? 'prod-cluster',
    now: () => new Date(clock),
    newRequestId: () => ids.shift() ?? '00000000-0000-4000-8000-000000000000',
    sleep: async (ms: number) => {
      sleeps.push(ms);
      clock += ms;
    },
    requestTimeoutMs: 0,
  };
  return { env, out, cluster, sleeps };
}
