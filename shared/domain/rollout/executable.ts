/**
 * Whether the plane can execute a rendered plan on this InferenceService. The plane's
 * renderer renders each component as one Deployment; a grouped component that runs
 * leader and worker pods is a LeaderWorkerSet upstream, which the plane neither renders
 * nor rolls. Such a plan parks (RolloutPlanReady False/PlanInvalid) instead of opening a
 * run that could never move, or closing one as Completed with nothing rolled.
 */
import type { RolloutGroup } from './types';

/** The component fields the check reads from the InferenceService spec. */
export type ComponentShapes = Partial<Record<string, { leader?: unknown; worker?: unknown } | undefined>>;

/** The first grouped component the plane cannot roll, as `groups[<i>]: …`, or nothing. */
export function findUnexecutableGroup(groups: readonly RolloutGroup[], spec: ComponentShapes): string | undefined {
  for (const [index, group] of groups.entries()) {
    for (const component of group.components ?? []) {
      const shape = spec[component];
      if (shape && (shape.leader !== undefined || shape.worker !== undefined)) {
        return `groups[${index}]: component "${component}" runs leader and worker pods (a LeaderWorkerSet), which this plane does not render or roll`;
      }
    }
  }
  return undefined;
}
