/**
 * What the engine pods of an InferenceService would expose to the bundled Prometheus of an
 * OME install, for a cluster without nodes: every ready pod of every engine, decoder and
 * router Deployment the plane renders serves requests at a steady simulated rate, and
 * `/metrics` (Prometheus text format 0.0.4, on its own 127.0.0.1 port) exposes
 * `requests_total`, `request_errors_total` and the histogram `request_duration_seconds`,
 * each labelled as the bundled Prometheus labels InferenceService pods' series: `namespace`,
 * `inferenceservice`, `component`, `revision_hash` and `pod`.
 *
 * A pod is `<deployment>-<i>` for i below the Deployment's ready replicas; its revision is
 * the workload revision the rollout runs name (`ome.io/workload-revision`, else the pod
 * template's hash). Counters grow with the wall clock only, with no randomness: fractional
 * values are exposed as they are, so `rate()` over any range gives exactly the simulated
 * rates. A revision's error ratio and latency can be raised in-process (`setErrorRatio`,
 * `setLatencySeconds`) or with the `simulation.ome.io/error-ratio` and
 * `simulation.ome.io/latency-seconds` annotations on the InferenceService (parseSimulationValue).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CANARY_ROLE, readyReplicasOf, revisionOf, ROLLOUT_ROLE_LABEL, type Deployment } from '../../shared/use-cases/rollout-runs/workloads';
import { WorkloadLabel } from '../../shared/domain/vocabulary';
import type { KubeObject } from './registry';

/** Annotations on an InferenceService that change what its simulated pods report. */
export const SimulationAnnotation = {
  /** The share of requests that fail: `0.2`, or per revision `canary=0.2,stable=0.001,<hash>=0.5`. */
  errorRatio: 'simulation.ome.io/error-ratio',
  /** The mean request latency in seconds, with the same grammar. */
  latencySeconds: 'simulation.ome.io/latency-seconds',
} as const;

export const DEFAULT_ERROR_RATIO = 0.001;
export const DEFAULT_LATENCY_SECONDS = 0.05;
/** Requests each ready pod serves per second. */
export const DEFAULT_REQUESTS_PER_SECOND = 10;
/** The histogram's upper bounds in seconds (the Prometheus client libraries' defaults). */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/**
 * How a pod's latencies spread around the mean: 30% at 0.6x, 40% at 1x, 30% at 1.4x. The
 * mean is exactly the configured latency, and a quantile query still sees a spread.
 */
const LATENCY_SPREAD: ReadonlyArray<{ factor: number; share: number }> = [
  { factor: 0.6, share: 0.3 },
  { factor: 1, share: 0.4 },
  { factor: 1.4, share: 0.3 },
];
const SIMULATED_COMPONENTS = new Set(['engine', 'decoder', 'router']);
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The labels of one pod's series, in exposition order. */
export interface PodLabels {
  namespace: string;
  inferenceservice: string;
  component: string;
  revision_hash: string;
  pod: string;
}

/** Which pods a setting applies to; without `revisionHash`, every revision of the InferenceService. */
export interface RevisionSelector {
  namespace: string;
  inferenceservice: string;
  revisionHash?: string;
}

/** Where the simulator reads the cluster's objects (the embedded API server's storage). */
export interface WorkloadSource {
  deployments(): readonly KubeObject[];
  inferenceService(namespace: string, name: string): KubeObject | undefined;
}

export interface EngineMetricsOptions {
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
  requestsPerSecond?: number;
}

/** The simulated pods' metrics, served over HTTP. */
export interface EngineMetrics {
  /** `http://127.0.0.1:<port>/metrics`. */
  url: string;
  /** `127.0.0.1:<port>`: the scrape target. */
  target: string;
  /** Sets (or with undefined clears) the error ratio of the matching pods; it wins over annotations. */
  setErrorRatio(selector: RevisionSelector, ratio: number | undefined): void;
  /** Sets (or with undefined clears) the mean latency in seconds of the matching pods; it wins over annotations. */
  setLatencySeconds(selector: RevisionSelector, seconds: number | undefined): void;
  /** The exposition a scrape would get now. */
  render(): string;
  stop(): Promise<void>;
}

interface PodCounters {
  labels: PodLabels;
  requests: number;
  errors: number;
  /** Cumulative count per LATENCY_BUCKETS bound. */
  buckets: number[];
  latencySum: number;
  /** When the counters were last advanced (ms). */
  at: number;
}

interface SimulatedPod {
  labels: PodLabels;
  canary: boolean;
}

/**
 * One annotation value: a bare number for every revision, or comma-separated `key=number`
 * entries whose key is `canary`, `stable` or a revision hash. Returns the number that
 * applies to the pod (a revision hash wins over its role, a role over a bare number), or
 * undefined when none does or the value does not parse.
 */
export function parseSimulationValue(value: string | undefined, pod: { revisionHash: string; canary: boolean }): number | undefined {
  if (value === undefined) return undefined;
  let all: number | undefined;
  let role: number | undefined;
  let revision: number | undefined;
  for (const entry of value.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const at = entry.indexOf('=');
    const number = Number(at < 0 ? entry : entry.slice(at + 1).trim());
    if (!Number.isFinite(number) || number < 0) continue;
    if (at < 0) {
      all = number;
      continue;
    }
    const key = entry.slice(0, at).trim();
    if (key === pod.revisionHash) revision = number;
    else if (key === (pod.canary ? 'canary' : 'stable')) role = number;
  }
  return revision ?? role ?? all;
}

/** The ready pods of the rendered engine, decoder and router Deployments. */
export function listSimulatedPods(deployments: readonly KubeObject[]): SimulatedPod[] {
  const pods: SimulatedPod[] = [];
  for (const object of deployments) {
    const deployment = object as Deployment;
    const labels = deployment.metadata.labels ?? {};
    const isvc = labels[WorkloadLabel.inferenceService];
    const component = labels[WorkloadLabel.component];
    if (!isvc || !component || !SIMULATED_COMPONENTS.has(component) || deployment.metadata.deletionTimestamp) continue;
    const revision = revisionOf(deployment);
    const canary = labels[ROLLOUT_ROLE_LABEL] === CANARY_ROLE;
    for (let i = 0; i < readyReplicasOf(deployment); i += 1) {
      pods.push({
        labels: { namespace: deployment.metadata.namespace ?? '', inferenceservice: isvc, component, revision_hash: revision, pod: `${deployment.metadata.name}-${i}` },
        canary,
      });
    }
  }
  return pods;
}

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
export function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function formatLabels(labels: PodLabels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return `{${pairs.join(',')}}`;
}

function formatNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  return Object.is(value, -0) ? '0' : String(value);
}

/** The exposition of the pods' counters, in text format 0.0.4. */
export function renderExposition(pods: readonly PodCounters[]): string {
  const lines: string[] = [];
  lines.push('# HELP requests_total Requests served by the pod.', '# TYPE requests_total counter');
  for (const pod of pods) lines.push(`requests_total${formatLabels(pod.labels)} ${formatNumber(pod.requests)}`);
  lines.push('# HELP request_errors_total Requests the pod answered with an error.', '# TYPE request_errors_total counter');
  for (const pod of pods) lines.push(`request_errors_total${formatLabels(pod.labels)} ${formatNumber(pod.errors)}`);
  lines.push('# HELP request_duration_seconds Time the pod took to answer a request.', '# TYPE request_duration_seconds histogram');
  for (const pod of pods) {
    LATENCY_BUCKETS.forEach((bound, index) => {
      lines.push(`request_duration_seconds_bucket${formatLabels(pod.labels, ['le', formatNumber(bound)])} ${formatNumber(pod.buckets[index] ?? 0)}`);
    });
    lines.push(`request_duration_seconds_bucket${formatLabels(pod.labels, ['le', '+Inf'])} ${formatNumber(pod.requests)}`);
    lines.push(`request_duration_seconds_sum${formatLabels(pod.labels)} ${formatNumber(pod.latencySum)}`);
    lines.push(`request_duration_seconds_count${formatLabels(pod.labels)} ${formatNumber(pod.requests)}`);
  }
  return `${lines.join('\n')}\n`;
}

function podKey(labels: PodLabels): string {
  return JSON.stringify([labels.namespace, labels.pod, labels.revision_hash, labels.component, labels.inferenceservice]);
}

function selectorKey(selector: RevisionSelector): string {
  return JSON.stringify([selector.namespace, selector.inferenceservice, selector.revisionHash ?? '']);
}

function checkedSetting(name: string, value: number | undefined, max: number): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0 && value <= max)) throw new RangeError(`${name} must be between 0 and ${max} (got ${value})`);
}

/**
 * The counters of the simulated pods. Each scrape advances every present pod's counters by
 * the time since the last one, at the rates that apply now; a pod seen for the first time
 * starts at zero, and a pod that is gone is forgotten (its series goes stale, as a
 * deleted pod's does).
 */
export class EngineMetricsSimulator {
  private readonly counters = new Map<string, PodCounters>();
  private readonly errorRatios = new Map<string, number>();
  private readonly latencies = new Map<string, number>();
  private readonly now: () => number;
  private readonly requestsPerSecond: number;

  constructor(
    private readonly source: WorkloadSource,
    options: EngineMetricsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.requestsPerSecond = options.requestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND;
  }

  setErrorRatio(selector: RevisionSelector, ratio: number | undefined): void {
    checkedSetting('error ratio', ratio, 1);
    this.advance();
    if (ratio === undefined) this.errorRatios.delete(selectorKey(selector));
    else this.errorRatios.set(selectorKey(selector), ratio);
  }

  setLatencySeconds(selector: RevisionSelector, seconds: number | undefined): void {
    checkedSetting('latency', seconds, 3600);
    this.advance();
    if (seconds === undefined) this.latencies.delete(selectorKey(selector));
    else this.latencies.set(selectorKey(selector), seconds);
  }

  render(): string {
    return renderExposition(this.advance());
  }

  /** Brings every present pod's counters to now, at the settings in force until now. */
  private advance(): PodCounters[] {
    const now = this.now();
    const seen = new Set<string>();
    const present: PodCounters[] = [];
    for (const pod of listSimulatedPods(this.source.deployments())) {
      const key = podKey(pod.labels);
      seen.add(key);
      let counters = this.counters.get(key);
      if (!counters) {
        counters = { labels: pod.labels, requests: 0, errors: 0, buckets: LATENCY_BUCKETS.map(() => 0), latencySum: 0, at: now };
        this.counters.set(key, counters);
      }
      const seconds = Math.max(0, now - counters.at) / 1000;
      if (seconds > 0) {
        const { errorRatio, latency } = this.settingsFor(pod);
        const requests = this.requestsPerSecond * seconds;
        counters.requests += requests;
        counters.errors += requests * errorRatio;
        counters.latencySum += requests * latency;
        LATENCY_BUCKETS.forEach((bound, index) => {
          const share = LATENCY_SPREAD.filter((part) => part.factor * latency <= bound).reduce((sum, part) => sum + part.share, 0);
          counters.buckets[index] = (counters.buckets[index] ?? 0) + requests * share;
        });
        counters.at = now;
      }
      present.push(counters);
    }
    for (const key of this.counters.keys()) if (!seen.has(key)) this.counters.delete(key);
    return present;
  }

  private settingsFor(pod: SimulatedPod): { errorRatio: number; latency: number } {
    const { namespace, inferenceservice, revision_hash: revisionHash } = pod.labels;
    const annotations = this.source.inferenceService(namespace, inferenceservice)?.metadata.annotations ?? {};
    const subject = { revisionHash, canary: pod.canary };
    const lookup = (overrides: Map<string, number>, annotation: string, fallback: number): number =>
      overrides.get(selectorKey({ namespace, inferenceservice, revisionHash })) ??
      overrides.get(selectorKey({ namespace, inferenceservice })) ??
      parseSimulationValue(annotations[annotation], subject) ??
      fallback;
    return {
      errorRatio: Math.min(1, lookup(this.errorRatios, SimulationAnnotation.errorRatio, DEFAULT_ERROR_RATIO)),
      latency: lookup(this.latencies, SimulationAnnotation.latencySeconds, DEFAULT_LATENCY_SECONDS),
    };
  }
}

/** Serves the simulator's exposition at `/metrics` on 127.0.0.1 (port 0 picks a free one). */
export async function startEngineMetrics(source: WorkloadSource, options: EngineMetricsOptions & { port?: number } = {}): Promise<EngineMetrics> {
  const simulator = new EngineMetricsSimulator(source, options);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: only GET /metrics is served\n');
      return;
    }
    let body: string;
    try {
      body = simulator.render();
    } catch (error) {
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${error instanceof Error ? error.message : String(error)}\n`);
      return;
    }
    response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolveListen());
  });
  // A scrape holds no reason to keep this process alive.
  server.unref();
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    target: `127.0.0.1:${port}`,
    setErrorRatio: (selector, ratio) => simulator.setErrorRatio(selector, ratio),
    setLatencySeconds: (selector, seconds) => simulator.setLatencySeconds(selector, seconds),
    render: () => simulator.render(),
    stop(): Promise<void> {
      closing ??= new Promise((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
