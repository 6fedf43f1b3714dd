import type { RolloutGroup, RolloutPolicyView } from '../../shared/domain/rollout/types';

export const manualCanary = (traffic = 10, capacity: string | number = '25%'): RolloutGroup => ({
  components: ['engine'],
  canary: {
    steps: [
      { capacity, traffic, pause: {} },
      { capacity: '100%', traffic: 100 },
    ],
  },
});

export const policy = (name: string, spec: RolloutPolicyView['spec'], extra: Partial<RolloutPolicyView> = {}): RolloutPolicyView => ({
  name,
  generation: 4,
  spec,
  ...extra,
});

export const policies = (...views: RolloutPolicyView[]): ReadonlyMap<string, RolloutPolicyView> =>
  new Map(views.map((view) => [view.name, view]));

export const NOW = new Date('2026-08-31T18:30:00Z');
