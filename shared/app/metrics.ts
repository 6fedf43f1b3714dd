/**
 * The functions' metrics: CloudWatch embedded metric format (EMF) documents on stdout, one
 * JSON line each, as Powertools' Metrics wrote them (docs/decisions.md, decision 24):
 *
 *   {"_aws":{"Timestamp":1764914400000,"CloudWatchMetrics":[{"Namespace":"OmePinning","Dimensions":[["service"]],"Metrics":[{"Name":"PinStatusWrites","Unit":"Count"}]}]},"service":"pin","PinStatusWrites":1}
 *
 * Every document has the dimension `service`; a metric recorded several times in one
 * invocation carries its values as a list. `addMetric` stores until `publishStoredMetrics`
 * (shared/app/publish-metrics.ts, after each invocation); a `singleMetric()` publishes each
 * metric as soon as it is added, with its own dimensions. POWERTOOLS_METRICS_DISABLED turns the
 * output off (so does POWERTOOLS_DEV, unless POWERTOOLS_METRICS_DISABLED is set);
 * POWERTOOLS_METRICS_NAMESPACE and POWERTOOLS_SERVICE_NAME stand in for a missing namespace and
 * service. Misuse fails or warns (on stderr) as with Powertools.
 */

export const MetricUnit = {
  Count: 'Count',
  Seconds: 'Seconds',
  Milliseconds: 'Milliseconds',
} as const;
export type MetricUnitName = (typeof MetricUnit)[keyof typeof MetricUnit];

/** CloudWatch's limits on one EMF document. */
const MAX_METRICS = 100;
const MAX_VALUES = 100;
const MAX_DIMENSIONS = 29;

const TRUE_VALUES = ['1', 'y', 'yes', 't', 'true', 'on'];

export interface MetricsOptions {
  namespace?: string;
  serviceName?: string;
  /** Publish each metric as soon as it is added. */
  singleMetric?: boolean;
  defaultDimensions?: Record<string, string>;
}

interface StoredMetric {
  unit: MetricUnitName;
  value: number | number[];
}

function warn(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** POWERTOOLS_METRICS_DISABLED when it is set, else POWERTOOLS_DEV. */
function isDisabled(env: Record<string, string | undefined>): boolean {
  const disabled = env.POWERTOOLS_METRICS_DISABLED;
  const flag = disabled ?? env.POWERTOOLS_DEV ?? '';
  return TRUE_VALUES.includes(flag.trim().toLowerCase());
}

export class Metrics {
  private readonly namespace: string;
  private readonly single: boolean;
  private readonly disabled: boolean;
  private readonly defaultDimensions: Record<string, string>;
  private dimensions: Record<string, string> = {};
  private stored = new Map<string, StoredMetric>();

  constructor(options: MetricsOptions = {}, env: Record<string, string | undefined> = process.env) {
    this.namespace = options.namespace || env.POWERTOOLS_METRICS_NAMESPACE?.trim() || 'default_namespace';
    this.single = options.singleMetric ?? false;
    this.disabled = isDisabled(env);
    this.defaultDimensions = { service: options.serviceName || env.POWERTOOLS_SERVICE_NAME?.trim() || 'service_undefined', ...options.defaultDimensions };
  }

  /** Records `value`; a single metric publishes it at once. */
  addMetric(name: string, unit: MetricUnitName, value: number): this {
    if (typeof name !== 'string' || name.length < 1 || name.length > 255) throw new RangeError('The metric name should be between 1 and 255 characters');
    if (typeof value !== 'number') throw new RangeError(`${String(value)} is not a valid number`);
    if (!Object.values(MetricUnit).includes(unit)) throw new RangeError(`Invalid metric unit '${String(unit)}', expected either option: ${Object.values(MetricUnit).join(',')}`);
    if (this.stored.size >= MAX_METRICS) this.publishStoredMetrics();
    const existing = this.stored.get(name);
    if (!existing) this.stored.set(name, { unit, value });
    else {
      if (existing.unit !== unit) throw new Error(`Metric "${name}" has already been added with unit "${existing.unit}", but we received unit "${unit}". Did you mean to use metric unit "${existing.unit}"?`);
      existing.value = [...(Array.isArray(existing.value) ? existing.value : [existing.value]), value];
      if (existing.value.length === MAX_VALUES) this.publishStoredMetrics();
    }
    if (this.single) this.publishStoredMetrics();
    return this;
  }

  /** A dimension of the metrics published next (this invocation's); `service` is always one. */
  addDimension(name: string, value: string): this {
    if (!name || !value) {
      warn(`The dimension ${name} doesn't meet the requirements and won't be added. Ensure the dimension name and value are non empty strings`);
      return this;
    }
    if (new Set([...Object.keys(this.defaultDimensions), ...Object.keys(this.dimensions), name]).size > MAX_DIMENSIONS) {
      throw new RangeError(`The number of metric dimensions must be lower than ${MAX_DIMENSIONS}`);
    }
    if (Object.hasOwn(this.dimensions, name) || Object.hasOwn(this.defaultDimensions, name)) warn(`Dimension "${name}" has already been added. The previous value will be overwritten.`);
    this.dimensions[name] = value;
    return this;
  }

  /** A metrics recorder of its own, with this one's namespace and service, that publishes each metric as it is added. */
  singleMetric(): Metrics {
    return new Metrics({ namespace: this.namespace, singleMetric: true, defaultDimensions: this.defaultDimensions });
  }

  hasStoredMetrics(): boolean {
    return this.stored.size > 0;
  }

  /** Writes the stored metrics as one EMF document, and forgets them and this invocation's dimensions. */
  publishStoredMetrics(): this {
    if (!this.hasStoredMetrics()) {
      warn('No application metrics to publish. The cold-start metric may be published if enabled. If application metrics should never be empty, consider using `throwOnEmptyMetrics`');
    }
    try {
      if (!this.disabled && this.hasStoredMetrics()) process.stdout.write(`${JSON.stringify(this.serialize())}\n`);
    } finally {
      this.stored = new Map();
      this.dimensions = {};
    }
    return this;
  }

  private serialize(): Record<string, unknown> {
    const dimensions = { ...this.defaultDimensions, ...this.dimensions };
    const values: Record<string, number | number[]> = {};
    for (const [name, metric] of this.stored) {
      if (Object.hasOwn(dimensions, name)) throw new Error(`EMF key collision on "${name}": registered as both a metric (number) and a dimension (string)`);
      values[name] = metric.value;
    }
    return {
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: this.namespace,
            Dimensions: [Object.keys(dimensions)],
            Metrics: [...this.stored].map(([name, { unit }]) => ({ Name: name, Unit: unit })),
          },
        ],
      },
      ...dimensions,
      ...values,
    };
  }
}
