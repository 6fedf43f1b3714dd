/**
 * `kubectl ome runtime effective` (alias `runtime show`): the runtime behind an
 * InferenceService, live and active (its pinned revision, or the live spec), and how the
 * pin, the sync token and RuntimeDrifted stand.
 */
import { REPORT_API_VERSION, formatTimestamp } from '../action-result';
import { runtimeFullName, type RuntimeEvidence, type RuntimeView } from '../domain/runtime';
import type { CommandEnv } from '../env';
import { readRuntimeEvidence } from '../read';
import { formatStructured, formatTable, type OutputFormat } from '../output';
import type { InferenceServiceObject } from '../isvc';
import { resolveDeploymentMode, type ComponentModeFields } from '../../shared/domain/runtime/deployment-mode';

export interface RuntimeEffectiveOptions {
  name: string;
  namespace: string;
  omeNamespace: string;
  output: OutputFormat;
}

export async function runRuntimeEffective(env: CommandEnv, options: RuntimeEffectiveOptions): Promise<number> {
  const { isvc, evidence } = await readRuntimeEvidence(env, options);
  env.io.stdout.write(formatEffective(isvc, evidence, options.output, env.now()));
  return 0;
}

type Row = [string, string, string];

function viewRows(scope: 'Live' | 'Active', view: RuntimeView, components: Row[]): Row[] {
  const rows: Row[] = [[scope, 'STATE', view.state]];
  if (view.reason) rows.push([scope, 'REASON', view.reason]);
  if (view.runtime) rows.push([scope, 'RUNTIME', view.runtime]);
  if (scope === 'Active' && view.revision) rows.push([scope, 'REVISION', view.revision]);
  if (view.hash) rows.push([scope, 'HASH', view.hash.short]);
  return [...rows, ...components.map(([, field, value]): Row => [scope, field, value])];
}

/** Each component's deployment mode and where it comes from, in the order OME checks them. */
export function componentModes(isvc: InferenceServiceObject): Array<{ component: string; mode: string; source: string }> {
  return (['engine', 'decoder', 'router'] as const)
    .filter((component) => isvc.spec?.[component] !== undefined)
    .map((component) => ({
      component,
      ...resolveDeploymentMode({
        component,
        serviceAnnotations: isvc.metadata.annotations,
        specMode: isvc.spec?.deploymentMode,
        service: isvc.spec?.[component] as ComponentModeFields,
      }),
    }));
}

export function formatEffective(isvc: InferenceServiceObject, evidence: RuntimeEvidence, output: OutputFormat, now: Date): string {
  const modes = componentModes(isvc);
  if (output === 'json' || output === 'yaml') {
    return formatStructured(
      {
        apiVersion: REPORT_API_VERSION,
        kind: 'RuntimeEffectiveReport',
        metadata: { namespace: isvc.metadata.namespace, name: isvc.metadata.name },
        collectedAt: formatTimestamp(now),
        content: {
          live: viewJson(evidence.live, evidence),
          active: viewJson(evidence.active, evidence),
          components: modes,
          pin: { mode: evidence.pinMode, state: evidence.pinState },
          sync: evidence.sync,
          status: evidence.status,
          drift: evidence.drift,
          liveRelation: evidence.liveRelation,
          issues: evidence.issues,
        },
      },
      output,
    );
  }
  if (output === 'wide') return formatEffectiveWide(evidence, modes);
  const componentRows: Row[] = modes.map(({ component, mode, source }) => ['', component.toUpperCase(), `${mode} (${source})`]);
  const rows: Row[] = [
    ...viewRows('Live', evidence.live, evidence.live.state === 'Available' ? componentRows : []),
    ...viewRows('Active', evidence.active, evidence.active.state === 'Available' ? componentRows : []),
    ['Service', 'PIN', `${evidence.pinMode}/${evidence.pinState}`],
    ['Service', 'SYNC', evidence.sync],
    ['Service', 'STATUS', evidence.status],
    ['Service', 'DRIFT', evidence.drift],
    ['Service', 'LIVE-RELATION', evidence.liveRelation],
    ...evidence.issues.map((issue): Row => ['Service', 'ISSUE', issue]),
  ];
  return formatTable(['SCOPE', 'FIELD', 'VALUE'], rows);
}

function viewJson(view: RuntimeView, evidence: RuntimeEvidence): Record<string, unknown> {
  return {
    state: view.state,
    ...(view.reason ? { reason: view.reason } : {}),
    ...(evidence.source && view.runtime ? { runtime: runtimeFullName(evidence.source) } : {}),
    ...(view.revision ? { revision: view.revision } : {}),
    ...(view.hash ? { hash: view.hash.short, fullHash: view.hash.full } : {}),
  };
}

function formatEffectiveWide(evidence: RuntimeEvidence, modes: ReturnType<typeof componentModes>): string {
  const runtime = evidence.source ? runtimeFullName(evidence.source) : undefined;
  const rows = (['Live', 'Active'] as const).flatMap((scope) => {
    const view = scope === 'Live' ? evidence.live : evidence.active;
    const perComponent = modes.length > 0 ? modes : [undefined];
    return perComponent.map((mode) => [
      scope,
      view.state,
      view.reason,
      view.runtime ? runtime : undefined,
      scope === 'Active' ? view.revision : undefined,
      view.hash?.short,
      mode?.component,
      mode?.mode,
      mode?.source,
      evidence.pinMode,
      evidence.pinState,
      evidence.sync,
      evidence.status,
      evidence.drift,
      evidence.liveRelation,
      evidence.issues.join(','),
    ]);
  });
  return formatTable(
    ['VIEW', 'STATE', 'REASON', 'RUNTIME', 'REVISION', 'HASH', 'COMPONENT', 'MODE', 'MODE-SOURCE', 'PIN', 'PIN-STATE', 'SYNC', 'STATUS', 'DRIFT', 'LIVE-RELATION', 'ISSUES'],
    rows,
  );
}
