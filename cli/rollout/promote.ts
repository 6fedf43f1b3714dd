/**
 * `kubectl ome rollout promote`: passes the manual gate a canary waits at, by setting
 * `ome.io/rollout-promote` to the canary revision; with `--override-analysis --yes`, the
 * analysis gate of the current step instead.
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
  /** Pass an analysis gate (needs `yes`): its checks, warm-up and bake are skipped for this step. */
  overrideAnalysis?: boolean;
}

export async function runRolloutPromote(env: CommandEnv, options: RolloutPromoteOptions): Promise<number> {
  // Refused before anything is read: overriding analysis is never confirmed by a prompt.
  if (options.overrideAnalysis && !options.yes) throw new CliError(CliMessage.analysisOverrideConfirmation);
  const deadline = startGuardedDeadline(env);
  const isvc = await readTarget<InferenceServiceObject>(env, deadline, options.namespace, options.name);
  checkTargetIdentity(isvc, options.namespace, options.name);
  const evaluation = evaluatePromote(isvc, { overrideAnalysis: options.overrideAnalysis === true });
  if (!evaluation.ok) throw new CliError(CliMessage.actionRefused(evaluation.refusal));
  const analysisRows: Array<[string, string]> = evaluation.analysis
    ? [
        ['Failed checks', `${evaluation.analysis.failedChecks} / ${evaluation.analysis.failureLimit}`],
        ['Interval', evaluation.analysis.interval],
        ['Warm-up', evaluation.analysis.warmUp],
        ['Bake', evaluation.analysis.bake],
      ]
    : [];
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
        ['Gate', evaluation.gate],
        ...analysisRows,
        ['Set annotation', Annotation.rolloutPromote],
        ['Value', evaluation.canaryRevision],
      ],
      warnings: [
        ...(evaluation.gate === 'Analysis' ? ["--override-analysis passes this step's analysis gate, skipping its health checks, warm-up and bake."] : []),
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
