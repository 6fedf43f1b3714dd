/**
 * What AWS gets for the forwarder shards: one schedule rule per shard whose target passes
 * `{"shard": i}` to the function, FORWARDER_SHARDS beside them, and the fleet-wide lag alarm.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageService } from './package-service';
import type { PackagedService } from './package-service';

type Json = Record<string, unknown>;

describe('Packaging: forwarder shards', () => {
  let packaged: PackagedService | undefined;
  let resources: PackagedService['template']['Resources'];

  beforeAll(async () => {
    packaged = await packageService('dev');
    resources = packaged.template.Resources;
  }, 300_000);

  afterAll(async () => {
    await packaged?.remove();
  });

  it('invokes the forwarder from one rule per shard, each passing its index, and sets FORWARDER_SHARDS to their number', () => {
    // Prepare
    const forwarder = Object.entries(resources).find(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.FunctionName === 'ome-pinning-dev-forward-watch-events');
    const rules = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::Events::Rule' && String(resource.Properties.Name).startsWith('ome-pinning-dev-forward-schedule-'))
      .sort((a, b) => String(a.Properties.Name).localeCompare(String(b.Properties.Name)));
    const shards = Number(((forwarder?.[1].Properties.Environment as { Variables: Json }).Variables.FORWARDER_SHARDS as string) ?? 0);

    // Assess
    expect(shards).toBe(4);
    expect(rules.map((rule) => rule.Properties.ScheduleExpression)).toEqual(Array.from({ length: shards }, () => 'rate(1 minute)'));
    const inputs = rules.map((rule) => (rule.Properties.Targets as Array<{ Input?: string; Arn: unknown }>).map((target) => [target.Input, target.Arn]));
    expect(inputs).toEqual(Array.from({ length: shards }, (_, shard) => [[JSON.stringify({ shard }), { 'Fn::GetAtt': [forwarder?.[0], 'Arn'] }]]));
  });

  it('alarms on the fleet-wide forwarder lag', () => {
    const alarm = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Alarm' && resource.Properties.MetricName === 'ForwarderLagSeconds');
    expect(alarm?.Properties).toMatchObject({
      Namespace: 'OmePinning',
      Dimensions: [{ Name: 'service', Value: 'forward-watch-events' }],
      Statistic: 'Maximum',
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });
});
