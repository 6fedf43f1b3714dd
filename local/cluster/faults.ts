/**
 * Fault injection for tests of retry paths: the next `count` requests matching verb,
 * resource and name fail with 401 (an expired token), 403 (access revoked), 409, 429, 500,
 * or a timeout (held `delayMs`, then 504),
 * over HTTP and in-process alike. `closeWatches()` ends every open watch cleanly.
 */
import { ApiError, conflict, internalError, timeout, tooManyRequests } from './api-errors';
import type { ResourceDef } from './registry';

export type FaultStatus = 401 | 403 | 409 | 429 | 500 | 'timeout';

export interface FaultSpec {
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection. Any when absent. */
  verb?: string;
  /** `plural`, `plural.group` or `plural/subresource`. Any when absent. */
  resource?: string;
  name?: string;
  namespace?: string;
  count: number;
  status: FaultStatus;
  /** How long a `timeout` fault holds the request before answering 504 (default 2000 ms). */
  delayMs?: number;
}

export interface FaultTarget {
  verb: string;
  def: ResourceDef;
  subresource: string;
  namespace?: string;
  name?: string;
}

export interface Faults {
  inject(spec: FaultSpec): void;
  closeWatches(): void;
  /** Drops every pending fault. */
  clear(): void;
  /** Faults not yet used up. */
  pending(): number;
}

function resourceMatches(wanted: string, target: FaultTarget): boolean {
  const { def, subresource } = target;
  const [res = '', sub] = wanted.split('/');
  const resOk = res === def.plural || res === `${def.plural}.${def.group}`;
  if (!resOk) return false;
  return sub === undefined || sub === subresource;
}

export class FaultInjector implements Faults {
  private readonly specs: FaultSpec[] = [];

  constructor(private readonly closeAllWatches: () => void) {}

  inject(spec: FaultSpec): void {
    if (!Number.isInteger(spec.count) || spec.count < 1) throw new Error('fault count must be a positive integer');
    this.specs.push({ ...spec });
  }

  closeWatches(): void {
    this.closeAllWatches();
  }

  clear(): void {
    this.specs.length = 0;
  }

  pending(): number {
    return this.specs.reduce((sum, spec) => sum + spec.count, 0);
  }

  /** Consumes the first matching fault; resolves with the error to answer, or undefined. */
  async take(target: FaultTarget): Promise<ApiError | undefined> {
    const index = this.specs.findIndex(
      (spec) =>
        (spec.verb === undefined || spec.verb === target.verb) &&
        (spec.resource === undefined || resourceMatches(spec.resource, target)) &&
        (spec.name === undefined || spec.name === target.name) &&
        (spec.namespace === undefined || spec.namespace === target.namespace),
    );
    const spec = this.specs[index];
    if (!spec) return undefined;
    spec.count -= 1;
    if (spec.count <= 0) this.specs.splice(index, 1);
    switch (spec.status) {
      case 401:
        return new ApiError({ message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      case 403:
        return new ApiError({
          message: `${target.def.plural} "${target.name ?? ''}" is forbidden: injected fault: access revoked`,
          reason: 'Forbidden',
          code: 403,
        });
      case 409:
        return conflict(target.def, target.name ?? '');
      case 429:
        return tooManyRequests();
      case 500:
        return internalError('injected fault');
      case 'timeout':
        await new Promise((resolve) => setTimeout(resolve, spec.delayMs ?? 2000));
        return timeout();
      default:
        return undefined;
    }
  }
}
