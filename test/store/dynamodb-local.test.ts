/** The DynamoDB Local launcher: readable errors, loopback only, and no Java left behind when its parent dies. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { nonLoopbackAddresses, tryConnect } from '../support/network';
import { alive, waitFor } from '../support/processes';

describe('Function: startDynamoDbLocal', () => {
  it('asks for a data directory when not in memory', async () => {
    await expect(startDynamoDbLocal({ inMemory: false })).rejects.toThrow('dataDir is required when inMemory is false');
  });

  it('listens on 127.0.0.1 only: the machine\'s other addresses refuse the connection', async () => {
    const others = nonLoopbackAddresses();
    // Without another address there is nothing to reach it from; the bind is still checked.
    const local = await startDynamoDbLocal();
    try {
      expect(local.loopbackOnly).toBe(true);
      expect(await tryConnect('127.0.0.1', local.port)).toBe('connected');
      for (const address of others) expect([address, await tryConnect(address, local.port)]).toEqual([address, 'ECONNREFUSED']);
    } finally {
      await local.stop();
    }
  });

  it('stops Java when the parent process is killed outright', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/hold-dynamodb-local.ts', import.meta.url));
    const parent = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'ignore'] });
    const javaPid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = out.split('\n').find((l) => /^\d+$/.test(l));
        if (line !== undefined) resolve(Number(line));
      });
      parent.once('exit', (code) => reject(new Error(`fixture exited early with ${String(code)}`)));
    });
    expect(alive(javaPid)).toBe(true);

    parent.kill('SIGKILL');

    expect(await waitFor(() => !alive(javaPid), 10_000)).toBe(true);
  });
});
