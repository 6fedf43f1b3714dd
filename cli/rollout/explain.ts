/**
 * `kubectl ome rollout explain`: the plan as declared, as it resolves now, and as the run
 * follows it, with READY, DRIFT, HOLD, PHASE, REVISIONS and TRAFFIC. The rows come from
 * the shared rollout rules; this command only reads and prints.
 */
import type { CanaryStatus } from '../../shared/domain/model';
import type { KubeObject } from '../../shared/ports/cluster';
import { canaryEntrypointOf } from '../../shared/domain/rollout/canary';
import { buildExplainRows, formatExplainTable, type ObservedGroup } from '../../shared/domain/rollout/explain';
import type { RolloutPolicySpec, RolloutPolicyView } from '../../shared/domain/rollout/types';
import { Resources } from '../../shared/domain/model/resources';
import { REPORT_API_VERSION, formatTimestamp } from '../action-result';
import { withTimeout, type CommandEnv } from '../env';
import { formatStructured, type OutputFormat } from '../output';
import { readService } from '../read';

export interface RolloutExplainOptions {
  name: string;
  namespace: string;
  output: OutputFormat;
}

type ComponentStatus = { rolloutPhase?: string; canary?: CanaryStatus; traffic?: Array<{ revisionName?: string; percent?: number }> };

export async function runRolloutExplain(env: CommandEnv, options: RolloutExplainOptions): Promise<number> {
  const isvc = await readService(env, options.namespace, options.name, 'get InferenceService');
  const policiesByName = await readPolicies(env, options.namespace);
  const components = ((isvc.status as { components?: Record<string, ComponentStatus> } | undefined)?.components ?? {});
  const observed = new Map<number, ObservedGroup>();
  const run = isvc.status?.rollout?.activeRun;
  // With no run, each canary group's record is what its last run left (e.g. the sample that rolled it back).
  const groups = run ? (run.plan?.groups ?? []) : (isvc.spec?.rollout?.groups ?? []).map((group) => ({ group }));
  groups.forEach((pinned, index) => {
    const component = pinned.group?.components?.[0];
    const phase = component ? components[component]?.rolloutPhase : undefined;
    // Each unit's canary sits on its entrypoint component; status.canary is upstream's alias.
    const canary = pinned.group?.canary ? (components[canaryEntrypointOf(pinned.group)]?.canary ?? isvc.status?.canary) : undefined;
    observed.set(index, { ...(phase ? { phase } : {}), ...(canary ? { canary } : {}) });
  });
  const traffic = Object.entries(components).flatMap(([component, status]) =>
    (status.traffic ?? [])
      .filter((entry) => entry.revisionName && typeof entry.percent === 'number')
      .map((entry) => ({ component, revision: entry.revisionName as string, percent: entry.percent as number })),
  );
  const rows = buildExplainRows({
    specGroups: isvc.spec?.rollout?.groups ?? [],
    rollout: isvc.status?.rollout ?? {},
    conditions: isvc.status?.conditions ?? [],
    annotations: isvc.metadata.annotations ?? {},
    observed,
    traffic,
    policiesByName,
  });
  if (options.output === 'json' || options.output === 'yaml') {
    env.io.stdout.write(
      formatStructured(
        {
          apiVersion: REPORT_API_VERSION,
          kind: 'RolloutExplainReport',
          metadata: { namespace: options.namespace, name: options.name },
          collectedAt: formatTimestamp(env.now()),
          content: { rows },
        },
        options.output,
      ),
    );
    return 0;
  }
  env.io.stdout.write(formatExplainTable(rows));
  return 0;
}

/** The namespace's RolloutPolicies, to show a policy group's live steps; none when unreadable. */
async function readPolicies(env: CommandEnv, namespace: string): Promise<Map<string, RolloutPolicyView>> {
  try {
    const page = await withTimeout(
      env.client.list<KubeObject & { spec?: RolloutPolicySpec }>(Resources.rolloutPolicies, { namespace, limit: 500 }),
      env.requestTimeoutMs,
    );
    return new Map(
      page.items.map((policy) => [
        policy.metadata.name,
        { name: policy.metadata.name, generation: policy.metadata.generation, spec: policy.spec ?? {} },
      ]),
    );
  } catch {
    return new Map();
  }
}
