/**
 * The embedded server's TLS certificate: self-signed for 127.0.0.1 and localhost, made
 * once per process with the `openssl` command (P-256, a day's validity) and shared by
 * every embedded server of the process. kubectl sends credentials (tokens, impersonation)
 * only over TLS, so the server offers TLS beside plain HTTP on the same port.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface ServingCertificate {
  /** PEM; also the CA a client trusts. */
  cert: Buffer;
  key: Buffer;
}

let certificate: Promise<ServingCertificate> | undefined;

async function generate(): Promise<ServingCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-apiserver-tls-'));
  try {
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=embedded-apiserver', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ]);
    return { cert: await readFile(join(dir, 'cert.pem')), key: await readFile(join(dir, 'key.pem')) };
  } catch (error) {
    throw new Error(`cannot make the embedded API server's TLS certificate with openssl: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The process's serving certificate, made on first use. */
export function servingCertificate(): Promise<ServingCertificate> {
  certificate ??= generate();
  certificate.catch(() => {
    certificate = undefined;
  });
  return certificate;
}
