/**
 * `kubectl ome rollout repin`: asks the controller to move the active run onto the live
 * plan, by setting `ome.io/rollout-repin` to the live plan's digest.
 */
import { Annotation } from '../../shared/domain/vocabulary';
import { buildActionResult, formatActionResult, ResultMessage } from '../action-result';
import { evaluateRepin } from '../domain/rollout';
import type { CommandEnv } from '../env';
import { CliError, CliMessage } from '../errors';
import {
  type GuardedActionOptions,
  checkTargetIdentity,
  confirmAction,
  formatPreview,
  readTarget,
  sendGuardedAnnotation,
  startGuardedDeadline,
  targetOf,
} from '../guarded';
import type { InferenceServiceObject } from '../isvc';

export type RolloutRepinOptions = GuardedActionOptions;

const CLIENT_DRY_RUN_MESSAGE = 'Validated locally; no patch sent. Controller repin was not observed.';

export async function runRolloutRepin(env: CommandEnv, options: RolloutRepinOptions): Promise<number> {
  const deadline = startGuardedDeadline(env);
  const isvc = await readTarget<InferenceServiceObject>(env, deadline, options.namespace, options.name);
  checkTargetIdentity(isvc, options.namespace, options.name);
  const evaluation = evaluateRepin(isvc, env.now());
  if (!evaluation.ok) throw new CliError(evaluation.message);
  const { request } = evaluation;
  const target = targetOf(isvc);

  env.io.stderr.write(
    formatPreview({
      title: 'ALPHA guarded rollout repin (not controller convergence)',
      rows: [
        ['Action', 'rollout repin'],
        ['Context', env.contextName],
        ['Workload NS', target.namespace],
        ['Target', `${target.kind}/${target.name}`],
        ['UID', target.uid],
        ['ResourceVersion', target.resourceVersion],
        ['Dry-run', options.dryRun],
        ['Run', request.runID],
        ['Pinned plan digest', request.pinnedPlanDigest],
        ['Requested digest', request.requestedPlanDigest],
        ['Group count', String(request.groupCount)],
        ['Set annotation', Annotation.rolloutRepin],
        ['Value', request.requestedPlanDigest],
      ],
      warnings: [
        'Run identity and progress remain; only pinned progression bodies change.',
        'A clamped canary step may hold before raising traffic.',
        'The controller checks the progression digest, not the full plan topology.',
        'The CLI separately refuses topology changes before sending a patch.',
        'The exact InferenceService UID/resourceVersion is tested atomically.',
      ],
    }),
  );
  await confirmAction(env, deadline, options.yes);

  const sent = await sendGuardedAnnotation(env, deadline, isvc, options, {
    key: Annotation.rolloutRepin,
    value: request.requestedPlanDigest,
    testOldValue: false,
    refreshCommand: 'rollout explain',
    outcomeUnknownMessage: CliMessage.repinOutcomeUnknown,
  });
  const message =
    options.dryRun === 'client'
      ? CLIENT_DRY_RUN_MESSAGE
      : options.dryRun === 'server'
        ? ResultMessage.serverDryRun
        : ResultMessage.repinAccepted;
  const result = buildActionResult({
    action: 'rollout repin',
    target,
    dryRun: options.dryRun,
    collectedAt: env.now(),
    sent,
    message,
    followUp: `kubectl ome rollout explain ${options.name} -n ${options.namespace} --context=${env.contextName}`,
    rollout: request,
  });
  env.io.stdout.write(formatActionResult(result, options.output));
  return 0;
}
