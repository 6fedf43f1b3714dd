/**
 * `kubectl ome rollout promote`: passes the manual gate a canary waits at, by setting
 * `ome.io/rollout-promote` to the canary revision.
 */
import { Annotation } from '../../shared/domain/vocabulary';
import { buildActionResult, formatActionResult, ResultMessage } from '../action-result';
import { evaluatePromote } from '../domain/rollout';
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

export interface RolloutPromoteOptions extends GuardedActionOptions {
  omeNamespace: string;
}

export async function runRolloutPromote(env: CommandEnv, options: RolloutPromoteOptions): Promise<number> {
  const deadline = startGuardedDeadline(env);
  const isvc = await readTarget<InferenceServiceObject>(env, deadline, options.namespace, options.name);
  checkTargetIdentity(isvc, options.namespace, options.name);
  const evaluation = evaluatePromote(isvc);
  if (!evaluation.ok) throw new CliError(CliMessage.actionRefused(evaluation.refusal));
  const target = targetOf(isvc);
  env.io.stderr.write(
    formatPreview({
      title: 'ALPHA guarded action preview (not controller convergence)',
      rows: [
        ['Action', 'rollout promote'],
        ['Context', env.contextName],
        ['Workload NS', target.namespace],
        ['OME NS', options.omeNamespace],
        ['Target', `${target.kind}/${target.name}`],
        ['UID', target.uid],
        ['ResourceVersion', target.resourceVersion],
        ['Dry-run', options.dryRun],
        ['Run', evaluation.runID],
        ['Step', `${evaluation.step} of ${evaluation.stepCount} (zero-based)`],
        ['Gate', 'Manual'],
        ['Set annotation', Annotation.rolloutPromote],
        ['Value', evaluation.canaryRevision],
      ],
      warnings: [
        'Each promote advances one step; the controller removes the annotation when it records the advance.',
        'Parent UID/resourceVersion CAS is not a multi-object transaction.',
      ],
    }),
  );
  await confirmAction(env, deadline, options.yes);
  const sent = await sendGuardedAnnotation(env, deadline, isvc, options, {
    key: Annotation.rolloutPromote,
    value: evaluation.canaryRevision,
    testOldValue: false,
    refreshCommand: 'rollout explain',
    outcomeUnknownMessage: CliMessage.promoteOutcomeUnknown,
  });
  const message = { client: ResultMessage.clientDryRun, server: ResultMessage.serverDryRun, none: ResultMessage.promoteAccepted }[options.dryRun];
  const result = buildActionResult({
    action: 'rollout promote',
    target,
    dryRun: options.dryRun,
    collectedAt: env.now(),
    sent,
    revisionHash: evaluation.canaryRevision,
    message,
    followUp: `kubectl ome rollout explain ${options.name} -n ${options.namespace} --context=${env.contextName}`,
  });
  env.io.stdout.write(formatActionResult(result, options.output));
  return 0;
}
