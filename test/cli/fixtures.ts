/** InferenceServices in the states the seeds walk through. */
import type { InferenceServiceObject } from '../../cli/isvc';

export const REPIN_NOW = new Date('2026-09-28T14:30:00Z');

/** `chat` in `prod`: a run pinned to rp1:aaaaaaaaaaaa, its policy now rendering rp1:bbbbbbbbbbbb. */
export function driftedChat(): InferenceServiceObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: {
      name: 'chat',
      namespace: 'prod',
      uid: '5d9f3c2a-8b41-4f7e-a0c6-1e2b3c4d5e6f',
      resourceVersion: '184467',
      generation: 7,
      annotations: {},
    },
    spec: {
      rollout: {
        groups: [{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary', kind: 'RolloutPolicy' } }],
      },
    },
    status: {
      observedGeneration: 7,
      conditions: [
        {
          type: 'RolloutPlanReady',
          status: 'True',
          reason: 'Pinned',
          message: 'run chat-0123456789ab pinned',
          lastTransitionTime: '2026-09-28T14:00:00Z',
        },
        {
          type: 'RolloutPlanDrift',
          status: 'True',
          reason: 'PolicyNewerThanRun',
          message:
            'groups[0]: live render rp1:bbbbbbbbbbbb differs from pinned rp1:aaaaaaaaaaaa; the edit applies at the next run (or via ome.io/rollout-repin)',
          lastTransitionTime: '2026-09-28T14:10:00Z',
        },
      ],
      rollout: {
        activeRun: {
          runID: 'chat-0123456789ab',
          openedAt: '2026-09-28T14:00:00Z',
          pinnedAt: '2026-09-28T14:00:00Z',
          targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }],
          plan: {
            groups: [
              {
                source: 'Policy',
                policyRef: { name: 'guarded', progression: 'canary', kind: 'RolloutPolicy' },
                policyGeneration: 4,
                portableDigest: 'rp1:aaaaaaaaaaaa',
                group: {
                  components: ['engine'],
                  canary: {
                    steps: [
                      { capacity: '50%', traffic: 20, pause: {} },
                      { capacity: '100%', traffic: 100 },
                    ],
                  },
                },
              },
            ],
          },
        },
        groups: [
          { index: 0, source: 'Policy', policyRef: { name: 'guarded', progression: 'canary', kind: 'RolloutPolicy' }, observedDigest: 'rp1:bbbbbbbbbbbb' },
        ],
      },
      canary: {
        canaryRevisionHash: 'bbbbbbbb',
        stableRevisionHash: 'aaaaaaaa',
        currentStep: 0,
        observedTrafficWeight: 20,
      },
    },
  };
}
