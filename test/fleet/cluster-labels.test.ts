import { describe, expect, it } from 'vitest';
import {
  applyLabelEdit,
  formatLabels,
  MAX_CLUSTER_LABELS,
  MAX_SELECTOR_LENGTH,
  parseClusterSelector,
  parseLabelEdits,
  parseLabelList,
  selectorMatches,
} from '../../shared/domain/fleet/cluster-labels';
import { InvalidInputError } from '../../shared/domain/errors';

const prodEu = { env: 'prod', region: 'eu' };
const prodUs = { env: 'prod', region: 'us', canary: '' };
const lab = { env: 'lab' };

describe('Function: selectorMatches', () => {
  it.each<[string, string, string[]]>([
    ['the empty selector: every cluster', '', ['prod-eu', 'prod-us', 'lab', 'bare']],
    ['equality', 'env=prod', ['prod-eu', 'prod-us']],
    ['double equals, as kubectl', 'env==prod', ['prod-eu', 'prod-us']],
    ['every requirement must hold', 'env=prod,region=eu', ['prod-eu']],
    ['inequality also selects a cluster without the key', 'env!=prod', ['lab', 'bare']],
    ['in', 'region in (eu,us)', ['prod-eu', 'prod-us']],
    ['notin also selects a cluster without the key', 'region notin (eu)', ['prod-us', 'lab', 'bare']],
    ['exists, whatever the value (also empty)', 'canary', ['prod-us']],
    ['does not exist', '!canary', ['prod-eu', 'lab', 'bare']],
    ['an empty value', 'canary=', ['prod-us']],
    ['spaces around the parts', ' env = prod , region in ( eu , us ) ', ['prod-eu', 'prod-us']],
    ['a prefixed key', 'example.com/tier=gpu', []],
  ])('%s: %s', (_name, text, expected) => {
    const clusters: Array<[string, Record<string, string> | undefined]> = [
      ['prod-eu', prodEu],
      ['prod-us', prodUs],
      ['lab', lab],
      ['bare', undefined],
    ];
    const selector = parseClusterSelector(text);
    expect(clusters.filter(([, labels]) => selectorMatches(selector, labels)).map(([id]) => id)).toEqual(expected);
  });
});

describe('Function: parseClusterSelector', () => {
  it.each<[string, string]>([
    ['env in (prod', 'selector "env in (prod": unbalanced parentheses'],
    ['env in prod)', 'selector "env in prod)": unbalanced parentheses'],
    ['env=prod,,region=eu', 'selector "env=prod,,region=eu": an empty requirement (two commas, or one at either end)'],
    ['env in ()', 'selector "env in ()": "env in ()" names no values'],
    ['env > 3', 'selector "env > 3": "env > 3" is not a requirement: write key=value, key!=value, key in (a,b), key notin (a,b), key or !key'],
    ['-env=prod', 'selector "-env=prod": label key "-env" must be at most 63 characters'],
    ['Example.com/env=prod', 'selector "Example.com/env=prod": the prefix of label key "Example.com/env" must be a DNS subdomain'],
    ['env=prod!', 'selector "env=prod!": "env=prod!" is not a requirement'],
    [`env=${'x'.repeat(64)}`, `the value "${'x'.repeat(64)}" of label "env" must be empty or at most 63 characters`],
  ])('refuses %s', (text, message) => {
    expect(() => parseClusterSelector(text)).toThrow(InvalidInputError);
    expect(() => parseClusterSelector(text)).toThrow(message);
  });

  it('refuses a selector longer than its bound before parsing it', () => {
    expect(() => parseClusterSelector('a,'.repeat(MAX_SELECTOR_LENGTH))).toThrow(`a selector may be at most ${MAX_SELECTOR_LENGTH} characters`);
  });

  it('keeps the selector as written, trimmed, for the wave record', () => {
    expect(parseClusterSelector('  env=prod ').text).toBe('env=prod');
  });
});

describe('Function: parseLabelEdits and applyLabelEdit', () => {
  it.each<[string, string[], boolean, Record<string, string> | string]>([
    ['adds a label', ['tier=gpu'], false, { env: 'lab', tier: 'gpu' }],
    ['sets the same value again: no change, no --overwrite needed', ['env=lab'], false, { env: 'lab' }],
    ['refuses another value without --overwrite, as kubectl label', ['env=prod'], false, "'env' already has a value (lab), and --overwrite is false"],
    ['changes a value with --overwrite', ['env=prod'], true, { env: 'prod' }],
    ['removes a label with key-', ['env-'], false, {}],
    ['removing a label the record lacks is no error', ['tier-'], false, { env: 'lab' }],
    ['refuses a word that is neither', ['tier'], false, '"tier" is not a label: write key=value to set one, or key- to remove it'],
    ['refuses the same key twice', ['tier=a', 'tier-'], false, 'label "tier" is given more than once'],
    ['refuses a bad value', ['tier=a b'], false, 'the value "a b" of label "tier" must be empty or at most 63 characters'],
  ])('%s', (_name, words, overwrite, expected) => {
    const run = () => applyLabelEdit(lab, parseLabelEdits(words), overwrite);
    if (typeof expected === 'string') expect(run).toThrow(expected);
    else expect(run()).toEqual(expected);
  });

  it(`holds at most ${MAX_CLUSTER_LABELS} labels`, () => {
    const words = Array.from({ length: MAX_CLUSTER_LABELS + 1 }, (_, index) => `k${index}=v`);
    expect(() => applyLabelEdit({}, parseLabelEdits(words), false)).toThrow(`a cluster may carry at most ${MAX_CLUSTER_LABELS} labels; this would give it ${MAX_CLUSTER_LABELS + 1}`);
  });
});

describe('Function: parseLabelList and formatLabels', () => {
  it('reads --labels as comma-separated pairs and prints them sorted', () => {
    const labels = parseLabelList('region=eu, env=prod');
    expect(labels).toEqual({ region: 'eu', env: 'prod' });
    expect(formatLabels(labels)).toBe('env=prod,region=eu');
    expect(formatLabels(undefined)).toBe('<none>');
    expect(parseLabelList('')).toEqual({});
  });

  it('refuses a removal in --labels', () => {
    expect(() => parseLabelList('env-')).toThrow('"env-" removes a label; --labels takes key=value pairs only');
  });
});
