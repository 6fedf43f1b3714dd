/**
 * Bearer-token authentication for the embedded server. Tokens are random opaque strings
 * minted in memory at start — one for the operator (user `embedded-admin` in
 * `system:masters`) and one per ServiceAccount the server is told about — and are never
 * written anywhere but the kubeconfig files the caller asks for. A ServiceAccount token
 * stops authenticating once its ServiceAccount is deleted, as bound tokens do.
 */
import { randomBytes } from 'node:crypto';
import { AUTHENTICATED_GROUP, MASTERS_GROUP, serviceAccountUser, type UserInfo } from './rbac';

/** The operator's user: what `kubectl` with the written kubeconfig is. */
export const ADMIN_USER: UserInfo = { username: 'embedded-admin', groups: [MASTERS_GROUP, AUTHENTICATED_GROUP] };

type TokenOwner = { kind: 'admin' } | { kind: 'serviceaccount'; namespace: string; name: string };

function mint(): string {
  return randomBytes(32).toString('base64url');
}

export class TokenAuthenticator {
  private readonly owners = new Map<string, TokenOwner>();
  private readonly serviceAccountTokens = new Map<string, string>();
  readonly adminToken: string;

  /** `serviceAccountExists` is asked on every authentication of a ServiceAccount token. */
  constructor(private readonly serviceAccountExists: (namespace: string, name: string) => boolean) {
    this.adminToken = mint();
    this.owners.set(this.adminToken, { kind: 'admin' });
  }

  /** The token of a ServiceAccount, minted on first request. */
  serviceAccountToken(namespace: string, name: string): string {
    const key = `${namespace}/${name}`;
    const existing = this.serviceAccountTokens.get(key);
    if (existing) return existing;
    const token = mint();
    this.serviceAccountTokens.set(key, token);
    this.owners.set(token, { kind: 'serviceaccount', namespace, name });
    return token;
  }

  /**
   * The user of an `Authorization` header: undefined when there is none (anonymous),
   * null when it carries a credential that is not valid.
   */
  authenticate(authorization: string | undefined): UserInfo | undefined | null {
    if (authorization === undefined || authorization.trim() === '') return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return null;
    const owner = this.owners.get(match[1] ?? '');
    if (!owner) return null;
    if (owner.kind === 'admin') return { ...ADMIN_USER, groups: [...ADMIN_USER.groups] };
    if (!this.serviceAccountExists(owner.namespace, owner.name)) return null;
    return serviceAccountUser(owner.namespace, owner.name);
  }
}
