/**
 * A small fleet simulation through the real local services: every figure is in the report,
 * and each per-change figure is at least its floor.
 */
import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../scripts/simulate/run-simulation';
import { formatSimulationReport } from '../../scripts/simulate';

describe('Fleet simulation: 3 clusters for 5 s', () => {
  it('reports every figure, each per-change figure at or above its floor', async () => {
    // Act
    const progress: string[] = [];
    const report = await runSimulation({ clusters: 3, latencyMs: 5, durationMs: 5_000, rate: 5, seed: 1, progress: (line) => progress.push(line) });

    // Assess
    expect(report.changes.completed).toBeGreaterThan(0);
    expect(report.changes.started).toBe(report.changes.completed + report.changes.lost);
    expect(report.changes.perSecond).toBeGreaterThan(0);
    expect(report.latencyMs.p50).not.toBeNull();
    expect(report.latencyMs.p99 ?? 0).toBeGreaterThanOrEqual(report.latencyMs.p50 ?? Infinity);
    expect(report.latencyMs.p50 ?? 0).toBeGreaterThanOrEqual(report.latencyMs.floor);
    expect(report.latencyMs.floor).toBeGreaterThan(0);
    expect(report.forwarderLagMs.p50).not.toBeNull();
    expect(report.kubernetes.perChange).toBeGreaterThanOrEqual(report.kubernetes.floorPerChange);
    expect(report.kubernetes.floorPerChange).toBeGreaterThanOrEqual(2);
    expect(report.dynamoDb.perChange).toBeGreaterThanOrEqual(report.dynamoDb.floorPerChange);
    expect(report.dynamoDb.writeUnits).toBeGreaterThan(0);
    expect(report.invocations.perChange).toBeGreaterThanOrEqual(report.invocations.floorPerChange);
    expect(report.invocations.byFunction.pin?.invocations ?? 0).toBeGreaterThan(0);
    expect(report.events.hintEntries).toBeGreaterThanOrEqual(report.changes.completed);
    expect(report.logs.bytes).toBeGreaterThan(0);
    expect(report.memory.perClusterBytes).toBeGreaterThan(0);
    // Progress was shown while it ran; the printout sets each figure beside its floor.
    expect(progress.some((line) => line.includes('clusters set up'))).toBe(true);
    const printed = formatSimulationReport(report);
    for (const figure of ['changes/s sustained', 'p50', 'p99', 'forwarder lag', 'Kubernetes requests / change', 'DynamoDB operations / change', 'invocations / change', 'memory / watched cluster']) {
      expect(printed).toContain(figure);
    }
    expect(printed.match(/floor/g)?.length ?? 0).toBeGreaterThanOrEqual(8);
  }, 180_000);
});
