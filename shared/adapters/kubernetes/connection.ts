/**
 * What the transport needs to reach one API server: its URL and a way to put credentials
 * and TLS material on a request. Kept free of @kubernetes/client-node so the Lambda bundles,
 * which build connections from cluster records (record-connection.ts), do not carry it;
 * the CLI and the local control plane build theirs from a KubeConfig (kube-config.ts).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';

/** The options of one request, as the transport hands them to `applyTo`. */
export type ConnectionRequestOptions = Omit<RequestOptions, 'headers'> & { headers: OutgoingHttpHeaders };

export interface ClusterConnection {
  /** The API server's URL (`https://…`, or `http://…` for a loopback server). */
  readonly server: string;
  /**
   * Sets the credentials (Authorization header, client certificate) and TLS settings (ca,
   * servername, rejectUnauthorized) of one request. Called for every request, so rotating
   * credentials (token files, exec plugins) are picked up.
   */
  applyTo(options: ConnectionRequestOptions): Promise<void>;
  /**
   * Set when `applyTo` puts the agent requests must use in the options (a proxy agent);
   * otherwise the transport keeps one keep-alive agent built from the TLS settings.
   */
  readonly providesAgent?: boolean;
}

export interface ResolvedCredentials {
  /** A bearer token: an EKS token presigned with STS, or a ServiceAccount token from the secret. */
  token?: string;
  /** A whole kubeconfig, when the secret holds one. */
  kubeconfig?: string;
  /**
   * With a token: the only API server it is sent to (EKS DescribeCluster's endpoint, or the
   * secret's `server`). Required with a token: the record's server is never used for one.
   */
  server?: string;
  /** With a token: the base64 PEM CA bundle that server's certificate must chain to (never the record's). */
  caData?: string;
  /** Epoch milliseconds after which the credential must not be used; clients built on it are dropped before then. */
  expiresAt?: number;
}
