/**
 * The local control plane's webhook key: a file in the data directory, readable by its
 * owner only, generated on first start and reused after, never stored in DynamoDB Local.
 * The served webhook reads it (ADMISSION_WEBHOOK_KEY_FILE); the registration derives each
 * embedded cluster's token from it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileWebhookKeyReader } from '../shared/adapters/webhook-key';

export const LOCAL_WEBHOOK_KEY_FILE = 'admission-webhook-key';
/** The secret the local front door adds to the calls it passes (local/front-door.ts). */
export const LOCAL_ORIGIN_SECRET_FILE = 'admission-origin-secret';

/** Returns the key file's path and the key, creating the file (mode 0600) when absent. */
export async function ensureLocalWebhookKey(dataDir: string): Promise<{ path: string; key: Buffer }> {
  return ensureSecretFile(join(dataDir, LOCAL_WEBHOOK_KEY_FILE));
}

/** The front door's origin secret, kept like the key. */
export async function ensureLocalOriginSecret(dataDir: string): Promise<{ path: string; key: Buffer }> {
  return ensureSecretFile(join(dataDir, LOCAL_ORIGIN_SECRET_FILE));
}

async function ensureSecretFile(path: string): Promise<{ path: string; key: Buffer }> {
  try {
    await writeFile(path, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A copy made with a looser umask or by hand: keep it, but private.
    await chmod(path, 0o600);
  }
  // Read as the webhook reads it, so both sides hold the same bytes.
  const { current } = await createFileWebhookKeyReader(path)();
  return { path, key: current };
}
