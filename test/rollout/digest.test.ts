import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GROUP_DIGEST,
  digestGroupProgression,
  digestPlan,
  digestPolicySpec,
  digestProgression,
} from '../../shared/domain/rollout/digest';
import type { RolloutGroup } from '../../shared/domain/rollout/types';

const rp1 = (text: string): string => `rp1:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;

describe('Function: digestProgression', () => {
  it('digests the default blue-green group as the seed prints it', () => {
    expect(digestProgression('blueGreen', {})).toBe('rp1:cca45ec1fb0f');
    expect(DEFAULT_GROUP_DIGEST).toBe('rp1:cca45ec1fb0f');
  });

  it.each([
    ['canary', { steps: [{ capacity: '25%', traffic: 10, pause: {} }] }, '{"canary":{"steps":[{"capacity":"25%","traffic":10,"pause":{}}]}}'],
    ['canary', { steps: [{ traffic: 10, capacity: '25%', pause: { duration: '10m' } }] }, '{"canary":{"steps":[{"capacity":"25%","traffic":10,"pause":{"duration":"10m0s"}}]}}'],
    ['rollingUpdate', { maxUnavailable: 0, maxSurge: '25%' }, '{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}}'],
    ['rollingUpdate', {}, '{"rollingUpdate":{}}'],
    // A manifest written for OME with an analysis gate: keys in upstream's order whatever order they are written in.
    [
      'canary',
      {
        readyTimeout: '15m',
        prometheus: { headers: { 'X-Scope-OrgID': 'team-a' }, providerRef: { name: 'mimir' } },
        steps: [
          { traffic: 10, capacity: '10%', analysis: { metrics: [{ threshold: '0.05', operator: 'LTE', query: 'q', name: 'err' }], onInconclusive: 'RollbackOnStall', failureLimit: 2, interval: '2m' } },
          { capacity: '100%', traffic: 100 },
        ],
      },
      '{"canary":{"steps":[{"capacity":"10%","traffic":10,"analysis":{"interval":"2m0s","failureLimit":2,"onInconclusive":"RollbackOnStall","metrics":[{"name":"err","query":"q","operator":"LTE","threshold":"0.05"}]}},{"capacity":"100%","traffic":100}],' +
        '"prometheus":{"providerRef":{"name":"mimir"},"headers":{"X-Scope-OrgID":"team-a"}},"readyTimeout":"15m0s"}}',
    ],
  ] as const)('%s %j hashes %s', (kind, body, json) => {
    expect(digestProgression(kind, body)).toBe(rp1(json));
  });
});

describe('Function: digestGroupProgression', () => {
  it.each<[string, RolloutGroup, string]>([
    ['no progression, no policy', { components: ['engine'] }, DEFAULT_GROUP_DIGEST],
    ['explicit blueGreen', { components: ['engine'], blueGreen: {} }, DEFAULT_GROUP_DIGEST],
    ['shape does not count', { components: ['engine', 'decoder'], soak: '1m', blueGreen: {} }, DEFAULT_GROUP_DIGEST],
    ['inline canary', { components: ['engine'], canary: { steps: [{ capacity: 1, traffic: 5 }] } }, rp1('{"canary":{"steps":[{"capacity":1,"traffic":5}]}}')],
  ])('%s', (_name, group, expected) => {
    expect(digestGroupProgression(group)).toBe(expected);
  });

  it('equals the digest of a policy carrying the same body', () => {
    const canary = { steps: [{ capacity: '50%', traffic: 20, pause: {} }] };
    expect(digestGroupProgression({ components: ['engine'], canary })).toBe(digestPolicySpec({ canary }));
  });
});

describe('Function: digestPlan', () => {
  it.each([
    [['rp1:bbbbbbbbbbbb'], 'rp1:1d153db2a5df'],
    [['rp1:cca45ec1fb0f', 'rp1:bbbbbbbbbbbb'], rp1('rp1:cca45ec1fb0f|rp1:bbbbbbbbbbbb')],
    [[], rp1('')],
  ])('%j -> %s', (digests, expected) => {
    expect(digestPlan(digests)).toBe(expected);
  });

  it('is order-sensitive', () => {
    expect(digestPlan(['rp1:aaaaaaaaaaaa', 'rp1:bbbbbbbbbbbb'])).not.toBe(digestPlan(['rp1:bbbbbbbbbbbb', 'rp1:aaaaaaaaaaaa']));
  });
});
