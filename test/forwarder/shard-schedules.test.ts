/**
 * The deployed shard count and the schedule rules agree: one rule per shard, each passing
 * its own index. A rule too few would leave a shard's clusters unwatched without an error.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseServerlessRouting } from '../../local/bus/rules';
import { loadConfig } from '../../shared/app/config';

const text = readFileSync(fileURLToPath(new URL('../../serverless.yml', import.meta.url)), 'utf8');

describe('serverless.yml: forwarder shards', () => {
  it('has one schedule rule per FORWARDER_SHARDS, passing shards 0 to N−1, every minute', () => {
    // Prepare
    const functions = (parse(text) as { functions: Record<string, { environment?: Record<string, string> }> }).functions;
    const environment = functions['forward-watch-events']?.environment ?? {};
    const config = loadConfig({ TABLE_NAME: 't', ...environment });
    const routing = parseServerlessRouting(text);

    // Act
    const schedules = routing.rules.filter((rule) => rule.functionName === 'forward-watch-events' && rule.schedule);

    // Assess
    expect(config.forwarderShards).toBeGreaterThan(1);
    expect(schedules.map((rule) => rule.input)).toEqual(Array.from({ length: config.forwarderShards ?? 0 }, (_, shard) => ({ shard })));
    expect(new Set(schedules.map((rule) => rule.schedule))).toEqual(new Set(['rate(1 minute)']));
    expect(new Set(schedules.map((rule) => rule.name)).size).toBe(schedules.length);
  });

  it('lets a run work past the next run’s start, within the function timeout: the hand-over overlaps', () => {
    // Prepare
    const fn = (parse(text) as { functions: Record<string, { timeout: number; environment: Record<string, string> }> }).functions['forward-watch-events'];
    const config = loadConfig({ TABLE_NAME: 't', ...fn?.environment });

    // Assess
    expect(config.forwarderMaxRuntimeMs).toBeGreaterThan(60_000);
    // The handler keeps 3 s back for logs and metrics.
    expect((config.forwarderMaxRuntimeMs ?? Infinity) + 3_000).toBeLessThanOrEqual((fn?.timeout ?? 0) * 1000);
  });
});
