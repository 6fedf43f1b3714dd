/**
 * Where the admission webhook's front door looks a cluster's token digest up
 * (infra/front-door/viewer-request.js): `cluster/<id>` → hex SHA-256 of the token.
 * Deployed, that is the stack's CloudFront KeyValueStore, written through the AWS CLI
 * (its SigV4A signing is built in; the SDK client for it is not published for our SDK
 * release). Locally, a JSON file the local front door reads (local/front-door.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { InvalidInputError } from '../../domain/errors';

export interface FrontDoorStore {
  /** Names the store in messages: the key value store's ARN, or the file. */
  readonly where: string;
  put(key: string, value: string): Promise<void>;
  /** Removes the entry; `absent` when there was none. */
  delete(key: string): Promise<'deleted' | 'absent'>;
}

type Entries = Record<string, string>;

async function readEntries(path: string): Promise<Entries> {
  try {
    return (JSON.parse(await readFile(path, 'utf8')) as { entries?: Entries }).entries ?? {};
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new InvalidInputError(`the front door store ${path} is not JSON of the form {"entries": {...}}: ${(error as Error).message}`);
  }
}

/** A JSON file of entries, replaced whole (write, then rename) so a reader never sees half of it. */
export function createFileFrontDoorStore(path: string): FrontDoorStore {
  const write = async (entries: Entries): Promise<void> => {
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ entries }, null, 2)}\n`);
    await rename(temporary, path);
  };
  return {
    where: path,
    put: async (key, value) => write({ ...(await readEntries(path)), [key]: value }),
    delete: async (key) => {
      const entries = await readEntries(path);
      if (!(key in entries)) return 'absent';
      delete entries[key];
      await write(entries);
      return 'deleted';
    },
  };
}

/** Reads a file store for lookups, again only when the file changed. */
export function watchFileFrontDoorStore(path: string): (key: string) => string | undefined {
  let loadedAt = -1;
  let entries: Entries = {};
  return (key) => {
    let modified: number;
    try {
      modified = statSync(path).mtimeMs;
    } catch {
      return undefined;
    }
    if (modified !== loadedAt) {
      entries = (JSON.parse(readFileSync(path, 'utf8')) as { entries?: Entries }).entries ?? {};
      loadedAt = modified;
    }
    return Object.hasOwn(entries, key) ? entries[key] : undefined;
  };
}

/** Runs `aws` with arguments and returns its standard output. */
export type AwsCli = (args: readonly string[]) => Promise<string>;

const execFileAsync = promisify(execFile);

export const runAwsCli: AwsCli = async (args) => {
  try {
    return (await execFileAsync('aws', [...args], { timeout: 30_000 })).stdout;
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stderr?: string };
    if (failed.code === 'ENOENT') throw new InvalidInputError('the AWS CLI (aws) is not installed: it writes the front door\'s key value store; install AWS CLI v2, or run the printed commands elsewhere');
    throw new InvalidInputError(`aws ${args.slice(0, 2).join(' ')} failed: ${(failed.stderr ?? failed.message).trim()}`);
  }
};

/** Attempts when another writer changed the store between our read of its ETag and our write. */
const KVS_ATTEMPTS = 3;

/**
 * The stack's CloudFront KeyValueStore. Each write names the store's current ETag
 * (`--if-match`), as the API requires; a write that lost to another is tried again.
 */
export function createKvsFrontDoorStore(kvsArn: string, aws: AwsCli = runAwsCli): FrontDoorStore {
  const base = ['cloudfront-keyvaluestore'];
  const etag = async (): Promise<string> => (await aws([...base, 'describe-key-value-store', '--kvs-arn', kvsArn, '--query', 'ETag', '--output', 'text'])).trim();
  const withEtag = async (action: (etag: string) => Promise<void>): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await action(await etag());
      } catch (error) {
        if (attempt >= KVS_ATTEMPTS || !/PreconditionFailed|ConflictException/.test((error as Error).message)) throw error;
      }
    }
  };
  return {
    where: kvsArn,
    put: (key, value) => withEtag(async (match) => void (await aws([...base, 'put-key', '--kvs-arn', kvsArn, '--key', key, '--value', value, '--if-match', match]))),
    delete: async (key) => {
      try {
        await withEtag(async (match) => void (await aws([...base, 'delete-key', '--kvs-arn', kvsArn, '--key', key, '--if-match', match])));
        return 'deleted';
      } catch (error) {
        if (/ResourceNotFoundException/.test((error as Error).message)) return 'absent';
        throw error;
      }
    },
  };
}
