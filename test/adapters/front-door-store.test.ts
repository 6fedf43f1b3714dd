/**
 * The stores of the webhook's front door: npm start's JSON file (written whole, read again
 * only when it changed) and the stack's CloudFront KeyValueStore through the AWS CLI, whose
 * writes must name the store's current ETag and are tried again when another writer won.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileFrontDoorStore, createKvsFrontDoorStore, watchFileFrontDoorStore, type AwsCli } from '../../shared/adapters/front-door';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

describe('the file store', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('puts, reads and deletes entries, and a reader sees each change', async () => {
    dir = await mkdtemp(join(tmpdir(), 'front-door-'));
    const path = join(dir, 'front-door.json');
    const store = createFileFrontDoorStore(path);
    const lookup = watchFileFrontDoorStore(path);

    expect(lookup('cluster/a')).toBeUndefined();
    await store.put('cluster/a', 'aa');
    await store.put('cluster/b', 'bb');
    expect([lookup('cluster/a'), lookup('cluster/b')]).toEqual(['aa', 'bb']);
    expect(await store.delete('cluster/a')).toBe('deleted');
    expect(await store.delete('cluster/a')).toBe('absent');
    // The reader notices by modification time; make sure the clock moved.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.put('cluster/b', 'b2');
    expect([lookup('cluster/a'), lookup('cluster/b'), lookup('constructor')]).toEqual([undefined, 'b2', undefined]);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ entries: { 'cluster/b': 'b2' } });
  });
});

describe('the key value store through the AWS CLI', () => {
  /** Answers describe-key-value-store with an ETag; fails the first `conflicts` writes as CloudFront does when the ETag moved. */
  function fakeAws(conflicts = 0, failure = 'An error occurred (ConflictException) when calling the PutKey operation: ETag mismatch'): { aws: AwsCli; calls: string[][] } {
    const calls: string[][] = [];
    let etag = 0;
    let failed = 0;
    const aws: AwsCli = async (args) => {
      calls.push([...args]);
      if (args[1] === 'describe-key-value-store') return `ETAG${(etag += 1)}\n`;
      if (failed < conflicts) {
        failed += 1;
        throw new Error(failure);
      }
      return '{}';
    };
    return { aws, calls };
  }

  it('writes with the current ETag', async () => {
    const { aws, calls } = fakeAws();

    await createKvsFrontDoorStore(ARN, aws).put('cluster/prod-eu-1', 'ab12');

    expect(calls).toEqual([
      ['cloudfront-keyvaluestore', 'describe-key-value-store', '--kvs-arn', ARN, '--query', 'ETag', '--output', 'text'],
      ['cloudfront-keyvaluestore', 'put-key', '--kvs-arn', ARN, '--key', 'cluster/prod-eu-1', '--value', 'ab12', '--if-match', 'ETAG1'],
    ]);
  });

  it('reads the ETag again after losing to another writer, three attempts at most', async () => {
    const twice = fakeAws(2);
    await createKvsFrontDoorStore(ARN, twice.aws).put('cluster/a', 'v');
    expect(twice.calls.filter((call) => call[1] === 'put-key').map((call) => call.at(-1))).toEqual(['ETAG1', 'ETAG2', 'ETAG3']);

    const always = fakeAws(3);
    await expect(createKvsFrontDoorStore(ARN, always.aws).put('cluster/a', 'v')).rejects.toThrow(/ConflictException/);
  });

  it('says absent when deleting a key the store does not hold', async () => {
    const { aws } = fakeAws(1, 'An error occurred (ResourceNotFoundException) when calling the DeleteKey operation: Key not found');

    expect(await createKvsFrontDoorStore(ARN, aws).delete('cluster/gone')).toBe('absent');
  });
});
