/**
 * The simulated engine pods' exposition: which pods exist, how their counters grow on a
 * clock the test moves (monotonic, exact rates, a raised ratio applying from then on),
 * label escaping, the annotation grammar, and the text format as promtool reads it.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ERROR_RATIO,
  DEFAULT_REQUESTS_PER_SECOND,
  EngineMetricsSimulator,
  escapeLabelValue,
  LATENCY_BUCKETS,
  listSimulatedPods,
  parseSimulationValue,
  SimulationAnnotation,
  startEngineMetrics,
  type WorkloadSource,
} from '../../local/cluster/engine-metrics';
import { renderPrometheusConfig } from '../../local/prometheus';
import type { KubeObject } from '../../local/cluster/registry';

function deployment(name: string, options: { isvc?: string; component?: string; ready?: number; canary?: boolean; revision?: string; generation?: number; observed?: number; namespace?: string } = {}): KubeObject {
  const labels: Record<string, string> = {};
  if (options.isvc !== null) labels['ome.io/inferenceservice'] = options.isvc ?? 'chat';
  if (options.component !== '') labels['ome.io/component'] = options.component ?? 'engine';
  if (options.canary) labels['ome.io/rollout-role'] = 'canary';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: options.namespace ?? 'prod', labels, annotations: { 'ome.io/workload-revision': options.revision ?? 'aaaa1111' }, generation: options.generation ?? 1 },
    spec: { replicas: options.ready ?? 1, template: {} },
    status: { observedGeneration: options.observed ?? options.generation ?? 1, readyReplicas: options.ready ?? 1 },
  };
}

class FakeSource implements WorkloadSource {
  items: KubeObject[] = [];
  isvcs = new Map<string, KubeObject>();
  deployments(): readonly KubeObject[] {
    return this.items;
  }
  inferenceService(namespace: string, name: string): KubeObject | undefined {
    return this.isvcs.get(`${namespace}/${name}`);
  }
  annotate(namespace: string, name: string, annotations: Record<string, string>): void {
    this.isvcs.set(`${namespace}/${name}`, { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace, annotations } });
  }
}

class Clock {
  at = 1_000_000;
  now = (): number => this.at;
  advance(seconds: number): void {
    this.at += seconds * 1000;
  }
}

/** `name{labels} value` lines as a map from the series to its number. */
function parse(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

function value(text: string, metric: string, pod: string): number {
  const found = [...parse(text)].find(([key]) => key.startsWith(`${metric}{`) && key.includes(`pod="${pod}"`) && !key.includes('le='));
  if (!found) throw new Error(`no ${metric} for ${pod} in:\n${text}`);
  return found[1];
}

describe('listSimulatedPods', () => {
  it.each([
    ['a ready engine Deployment gives one pod per ready replica', deployment('chat-engine', { ready: 3 }), ['chat-engine-0', 'chat-engine-1', 'chat-engine-2']],
    ['decoder and router render too', deployment('chat-router', { component: 'router', ready: 1 }), ['chat-router-0']],
    ['a Deployment without the InferenceService label is not an engine', deployment('other', { isvc: null as unknown as string }), []],
    ['an unknown component is not simulated', deployment('chat-cache', { component: 'cache' }), []],
    ['no ready replicas, no pods', deployment('chat-engine', { ready: 0 }), []],
    ['a generation not yet observed has no ready pods', deployment('chat-engine', { generation: 2, observed: 1 }), []],
  ])('%s', (_title, object, pods) => {
    expect(listSimulatedPods([object]).map((pod) => pod.labels.pod)).toEqual(pods);
  });

  it('labels a pod with its namespace, InferenceService, component and workload revision', () => {
    expect(listSimulatedPods([deployment('chat-engine-canary', { canary: true, revision: 'bbbb2222' })])).toEqual([
      { labels: { namespace: 'prod', inferenceservice: 'chat', component: 'engine', revision_hash: 'bbbb2222', pod: 'chat-engine-canary-0' }, canary: true },
    ]);
  });
});

describe('parseSimulationValue', () => {
  const stable = { revisionHash: 'aaaa1111', canary: false };
  const canary = { revisionHash: 'bbbb2222', canary: true };
  it.each([
    ['absent', undefined, canary, undefined],
    ['a bare number applies to every revision', '0.2', stable, 0.2],
    ['a role applies to its pods', 'canary=0.2', canary, 0.2],
    ['a role does not apply to the other role', 'canary=0.2', stable, undefined],
    ['stable names the pods without the canary role', 'stable=0.05', stable, 0.05],
    ['a revision hash wins over its role', 'canary=0.2, bbbb2222=0.7', canary, 0.7],
    ['a role wins over a bare number', '0.1,canary=0.3', canary, 0.3],
    ['an entry that does not parse is skipped', 'canary=lots,0.4', canary, 0.4],
    ['a negative number is skipped', 'canary=-1', canary, undefined],
  ])('%s', (_title, text, pod, expected) => {
    expect(parseSimulationValue(text, pod)).toBe(expected);
  });
});

describe('escapeLabelValue', () => {
  it.each([
    ['plain', 'plain'],
    ['a"quote', 'a\\"quote'],
    ['back\\slash', 'back\\\\slash'],
    ['new\nline', 'new\\nline'],
    ['\\"', '\\\\\\"'],
  ])('%j', (raw, escaped) => {
    expect(escapeLabelValue(raw)).toBe(escaped);
  });
});

describe('EngineMetricsSimulator', () => {
  it('starts a new pod at zero and grows its counters at the simulated rates', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { ready: 2 })];
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now });
    const first = simulator.render();
    expect(value(first, 'requests_total', 'chat-engine-0')).toBe(0);
    clock.advance(10);
    const later = simulator.render();
    expect(value(later, 'requests_total', 'chat-engine-1')).toBeCloseTo(10 * DEFAULT_REQUESTS_PER_SECOND, 9);
    expect(value(later, 'request_errors_total', 'chat-engine-1')).toBeCloseTo(10 * DEFAULT_REQUESTS_PER_SECOND * DEFAULT_ERROR_RATIO, 9);
    expect(value(later, 'request_duration_seconds_count', 'chat-engine-1')).toBe(value(later, 'requests_total', 'chat-engine-1'));
    expect(value(later, 'request_duration_seconds_sum', 'chat-engine-1') / value(later, 'request_duration_seconds_count', 'chat-engine-1')).toBeCloseTo(0.05, 9);
  });

  it('keeps counters monotonic when the ratio changes, applying the new ratio from then on', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine-canary', { canary: true, revision: 'bbbb2222' })];
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now, requestsPerSecond: 100 });
    simulator.render();
    clock.advance(10);
    const before = value(simulator.render(), 'request_errors_total', 'chat-engine-canary-0');
    simulator.setErrorRatio({ namespace: 'prod', inferenceservice: 'chat', revisionHash: 'bbbb2222' }, 0.5);
    clock.advance(10);
    const text = simulator.render();
    expect(value(text, 'request_errors_total', 'chat-engine-canary-0')).toBeCloseTo(before + 500, 9);
    expect(value(text, 'requests_total', 'chat-engine-canary-0')).toBeCloseTo(2000, 9);
    // Lowering it again slows the counter; it never goes down.
    simulator.setErrorRatio({ namespace: 'prod', inferenceservice: 'chat', revisionHash: 'bbbb2222' }, undefined);
    clock.advance(10);
    expect(value(simulator.render(), 'request_errors_total', 'chat-engine-canary-0')).toBeCloseTo(before + 500 + 1, 9);
  });

  it('takes the ratio of the annotation on the InferenceService, and an in-process setting over it', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { revision: 'aaaa1111' }), deployment('chat-engine-canary', { canary: true, revision: 'bbbb2222' })];
    source.annotate('prod', 'chat', { [SimulationAnnotation.errorRatio]: 'canary=0.2' });
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now });
    simulator.render();
    clock.advance(10);
    let text = simulator.render();
    expect(value(text, 'request_errors_total', 'chat-engine-canary-0') / value(text, 'requests_total', 'chat-engine-canary-0')).toBeCloseTo(0.2, 9);
    expect(value(text, 'request_errors_total', 'chat-engine-0') / value(text, 'requests_total', 'chat-engine-0')).toBeCloseTo(DEFAULT_ERROR_RATIO, 9);
    simulator.setErrorRatio({ namespace: 'prod', inferenceservice: 'chat' }, 0);
    clock.advance(10);
    text = simulator.render();
    expect(value(text, 'request_errors_total', 'chat-engine-canary-0')).toBeCloseTo(20, 9);
  });

  it('rejects a ratio outside 0..1', () => {
    const simulator = new EngineMetricsSimulator(new FakeSource());
    expect(() => simulator.setErrorRatio({ namespace: 'prod', inferenceservice: 'chat' }, 1.5)).toThrow(RangeError);
    expect(() => simulator.setErrorRatio({ namespace: 'prod', inferenceservice: 'chat' }, Number.NaN)).toThrow(RangeError);
  });

  it('forgets a pod that is gone: when it returns, its series starts again at zero', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { ready: 2 })];
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now });
    simulator.render();
    clock.advance(5);
    source.items = [deployment('chat-engine', { ready: 1 })];
    expect(simulator.render()).not.toContain('chat-engine-1');
    clock.advance(5);
    source.items = [deployment('chat-engine', { ready: 2 })];
    const text = simulator.render();
    expect(value(text, 'requests_total', 'chat-engine-1')).toBe(0);
    expect(value(text, 'requests_total', 'chat-engine-0')).toBeCloseTo(100, 9);
  });

  it('writes cumulative histogram buckets ending at the request count', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine')];
    source.annotate('prod', 'chat', { [SimulationAnnotation.latencySeconds]: '0.2' });
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now });
    simulator.render();
    clock.advance(10);
    const series = parse(simulator.render());
    const buckets = [...LATENCY_BUCKETS.map(String), '+Inf'].map((le) => series.get(`request_duration_seconds_bucket{namespace="prod",inferenceservice="chat",component="engine",revision_hash="aaaa1111",pod="chat-engine-0",le="${le}"}`));
    expect(buckets.every((count) => count !== undefined)).toBe(true);
    const counts = buckets as number[];
    for (let i = 1; i < counts.length; i += 1) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] as number);
    // 30% at 0.12 s, 40% at 0.2 s, 30% at 0.28 s.
    expect(counts[LATENCY_BUCKETS.indexOf(0.1)]).toBe(0);
    expect(counts[LATENCY_BUCKETS.indexOf(0.25)]).toBeCloseTo(70, 9);
    expect(counts.at(-1)).toBeCloseTo(100, 9);
  });

  it('escapes label values in the exposition', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { isvc: 'we"ird\\name' })];
    const text = new EngineMetricsSimulator(source, { now: () => 0 }).render();
    expect(text).toContain('requests_total{namespace="prod",inferenceservice="we\\"ird\\\\name",component="engine",revision_hash="aaaa1111",pod="chat-engine-0"} 0');
  });
});

function promtool(): string | undefined {
  try {
    accessSync('/usr/bin/promtool', constants.X_OK);
    return '/usr/bin/promtool';
  } catch {
    return undefined;
  }
}

describe('served exposition', () => {
  it('serves text format 0.0.4 at /metrics and nothing else', async () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { ready: 2 })];
    const metrics = await startEngineMetrics(source);
    try {
      expect(metrics.target).toMatch(/^127\.0\.0\.1:\d+$/);
      const response = await fetch(metrics.url);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await response.text()).toContain('pod="chat-engine-1"');
      expect((await fetch(metrics.url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await metrics.stop();
    }
  });

  it.skipIf(promtool() === undefined)('passes `promtool check metrics`', () => {
    const source = new FakeSource();
    source.items = [deployment('chat-engine', { ready: 2 }), deployment('chat-engine-canary', { canary: true, revision: 'bbbb2222' })];
    const clock = new Clock();
    const simulator = new EngineMetricsSimulator(source, { now: clock.now });
    simulator.render();
    clock.advance(3);
    // Exit status 0: no parse error and no lint problem.
    expect(execFileSync(promtool() as string, ['check', 'metrics'], { input: simulator.render(), encoding: 'utf8' })).toBe('');
  });
});

describe('renderPrometheusConfig', () => {
  it('is one job over the targets, keeping the exposed labels', () => {
    expect(renderPrometheusConfig(['127.0.0.1:1', '127.0.0.1:2'], 5)).toBe(
      [
        'global:',
        '  scrape_interval: 5s',
        '  scrape_timeout: 5s',
        '  evaluation_interval: 5s',
        'scrape_configs:',
        '  - job_name: ome-engines',
        '    honor_labels: true',
        '    metrics_path: /metrics',
        '    static_configs:',
        '      - targets: ["127.0.0.1:1", "127.0.0.1:2"]',
        '',
      ].join('\n'),
    );
  });
});
