/**
 * `kubectl ome admin analysis-secrets allow|revoke -n NAMESPACE`: the consent that lets the
 * rollout-run function read analysis bearer tokens (a canary's `prometheus.authRef`, a metric
 * provider's `authSecretRef`) in one namespace. It is a RoleBinding there of the ClusterRole
 * `ome-pinning-analysis-secrets` (get Secrets, infra/k8s/rbac-rollout-run.yaml) to the
 * function's ServiceAccount and group; without it the function is refused every Secret.
 */
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import type { KubeObject } from '../../shared/ports/cluster';
import { AlreadyExistsError, NotFoundError } from '../../shared/domain/errors';
import type { Command } from '../command';
import { CliError } from '../errors';
import { resourceTypeOf } from './cluster-kinds';

/** The ClusterRole and the RoleBinding's name in each namespace that opted in. */
export const ANALYSIS_SECRETS_ROLE = 'ome-pinning-analysis-secrets';

/** The RoleBinding that lets rollout-run get Secrets in `namespace`. */
export function analysisSecretsBinding(namespace: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: ANALYSIS_SECRETS_ROLE, namespace, labels: { 'app.kubernetes.io/part-of': 'ome-pinning' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ANALYSIS_SECRETS_ROLE },
    subjects: [
      { kind: 'ServiceAccount', name: FUNCTION_SERVICE_ACCOUNTS['rollout-run'], namespace: SERVICE_ACCOUNT_NAMESPACE },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ome-pinning:rollout-run' },
    ],
  } as unknown as KubeObject;
}

const ROLE_BINDINGS = resourceTypeOf('RoleBinding');

const ALLOW: Command = {
  path: 'admin analysis-secrets allow',
  summary: 'Let canary analysis read its bearer-token Secrets in one namespace',
  usage: 'kubectl ome admin analysis-secrets allow -n NAMESPACE',
  description:
    `Creates the RoleBinding ${ANALYSIS_SECRETS_ROLE} in the namespace, binding the ClusterRole of the same name (get\n` +
    'Secrets) to the rollout-run function. Canaries there may then name a Secret in prometheus.authRef or a provider\n' +
    'binding\'s authSecretRef. Elsewhere the function is refused every Secret.',
  flags: [],
  async run(invocation) {
    const { namespace, connection } = await invocation.connect();
    if (!connection.admin) throw new CliError('this build cannot write to the cluster');
    try {
      await connection.admin.create(ROLE_BINDINGS, analysisSecretsBinding(namespace));
      invocation.deps.io.stdout.write(`rolebinding.rbac.authorization.k8s.io/${ANALYSIS_SECRETS_ROLE} created in ${namespace}\n`);
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error;
      invocation.deps.io.stdout.write(`rolebinding.rbac.authorization.k8s.io/${ANALYSIS_SECRETS_ROLE} unchanged in ${namespace}\n`);
    }
    return 0;
  },
};

const REVOKE: Command = {
  path: 'admin analysis-secrets revoke',
  summary: 'Take back canary analysis\'s read of Secrets in one namespace',
  usage: 'kubectl ome admin analysis-secrets revoke -n NAMESPACE',
  description: `Deletes the RoleBinding ${ANALYSIS_SECRETS_ROLE} in the namespace. Analysis samples that need a token there\n` + 'become inconclusive with the API server\'s Forbidden message.',
  flags: [],
  async run(invocation) {
    const { namespace, connection } = await invocation.connect();
    if (!connection.admin) throw new CliError('this build cannot write to the cluster');
    try {
      await connection.admin.delete(ROLE_BINDINGS, namespace, ANALYSIS_SECRETS_ROLE);
      invocation.deps.io.stdout.write(`rolebinding.rbac.authorization.k8s.io/${ANALYSIS_SECRETS_ROLE} deleted in ${namespace}\n`);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      invocation.deps.io.stdout.write(`rolebinding.rbac.authorization.k8s.io/${ANALYSIS_SECRETS_ROLE} not found in ${namespace}\n`);
    }
    return 0;
  },
};

export const ADMIN_ANALYSIS_SECRETS_COMMANDS: Command[] = [ALLOW, REVOKE];
