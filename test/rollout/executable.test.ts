import { describe, expect, it } from 'vitest';
import { findUnexecutableGroup } from '../../shared/domain/rollout/executable';
import type { ComponentShapes } from '../../shared/domain/rollout/executable';
import type { RolloutGroup } from '../../shared/domain/rollout/types';

const LWS = (component: string, index: number) =>
  `groups[${index}]: component "${component}" runs leader and worker pods (a LeaderWorkerSet), which this plane does not render or roll`;

describe('Function: findUnexecutableGroup', () => {
  it.each<[string, RolloutGroup[], ComponentShapes, string | undefined]>([
    ['no groups', [], { engine: { leader: {} } }, undefined],
    ['plain Deployments', [{ components: ['engine', 'decoder'] }], { engine: {}, decoder: {} }, undefined],
    // The type requires components; an object read from the cluster may still lack them.
    ['a group without components', [{} as RolloutGroup], { engine: { leader: {} } }, undefined],
    ['a component the spec does not have', [{ components: ['router'] }], { engine: {} }, undefined],
    ['a grouped engine with a leader', [{ components: ['engine'] }], { engine: { leader: {} } }, LWS('engine', 0)],
    ['a grouped decoder with workers only', [{ components: ['engine'] }, { components: ['decoder'] }], { engine: {}, decoder: { worker: { size: 2 } } }, LWS('decoder', 1)],
    ['a leader set to null counts (it is present)', [{ components: ['engine'] }], { engine: { leader: null } }, LWS('engine', 0)],
    ['a multi-node component nobody groups', [{ components: ['engine'] }], { engine: {}, decoder: { leader: {} } }, undefined],
    ['the first of two names the group', [{ components: ['engine'] }, { components: ['decoder'] }], { engine: { leader: {} }, decoder: { leader: {} } }, LWS('engine', 0)],
  ])('%s', (_name, groups, spec, expected) => {
    expect(findUnexecutableGroup(groups, spec)).toBe(expected);
  });
});
