/**
 * The real control plane's keys and certificates, made with the `openssl` command into its
 * data directory: a CA, the API server's serving certificate (127.0.0.1 and the in-cluster
 * names), the ServiceAccount token signing key, and a serving certificate for the plane's
 * local admission webhook, signed by the same CA so its `caBundle` is the CA.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  apiServerCert: string;
  apiServerKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  webhookCert: string;
  webhookKey: string;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    throw new Error(`openssl ${args[0]} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function signedCertificate(dir: string, name: string, subject: string, altNames: string, ca: { cert: string; key: string }): Promise<{ cert: string; key: string }> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extensions = join(dir, `${name}.ext`);
  await writeFile(extensions, `subjectAltName=${altNames}\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n`);
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject, '-keyout', key, '-out', csr]);
  await openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-extfile', extensions, '-out', cert]);
  return { cert, key };
}

/** Makes every key and certificate in `dir` (which must exist); a day or two of validity. */
export async function makeControlPlanePki(dir: string): Promise<ControlPlanePki> {
  const caCert = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=ome-test-ca', '-keyout', caKey, '-out', caCert]);
  const ca = { cert: caCert, key: caKey };
  const apiServer = await signedCertificate(dir, 'apiserver', '/CN=kube-apiserver', 'IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc', ca);
  const webhook = await signedCertificate(dir, 'webhook', '/CN=ome-pinning-webhook', 'IP:127.0.0.1,DNS:localhost', ca);
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await openssl(['genrsa', '-out', serviceAccountKey, '2048']);
  await openssl(['rsa', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
  return { caCert, caKey, apiServerCert: apiServer.cert, apiServerKey: apiServer.key, serviceAccountKey, serviceAccountPub, webhookCert: webhook.cert, webhookKey: webhook.key };
}

/** base64 of a PEM file, as kubeconfigs and `caBundle` carry it. */
export async function base64Of(path: string): Promise<string> {
  return (await readFile(path)).toString('base64');
}
