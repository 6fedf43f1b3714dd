import { describe, expect, it } from 'vitest';
import type { UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { CompactLogFormatter } from '../../shared/app/logger';

const CONTEXT = {
  functionName: 'ome-pinning-dev-pin',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:ome-pinning-dev-pin',
  memoryLimitInMB: '256',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  coldStart: false,
};

function attributesOf(overrides: Partial<UnformattedAttributes> = {}): UnformattedAttributes {
  return {
    logLevel: 'INFO',
    message: 'InferenceService reconciled',
    timestamp: new Date('2026-12-05T06:00:00.000Z'),
    serviceName: 'pin',
    environment: '',
    sampleRateValue: 0,
    lambdaContext: CONTEXT,
    ...overrides,
  } as UnformattedAttributes;
}

describe('CompactLogFormatter', () => {
  it('keeps what finds the invocation and what the line says, not what the log group already names', () => {
    const line = new CompactLogFormatter().formatAttributes(attributesOf(), { cluster: 'prod-eu-1', result: { outcome: 'pinned' } }).getAttributes();
    expect(line).toEqual({
      level: 'INFO',
      message: 'InferenceService reconciled',
      timestamp: '2026-12-05T06:00:00.000Z',
      service: 'pin',
      function_request_id: CONTEXT.awsRequestId,
      cluster: 'prod-eu-1',
      result: { outcome: 'pinned' },
    });
    expect(JSON.stringify(line)).not.toMatch(/arn:aws|function_name|memory/);
  });

  it('marks a cold start and carries the X-Ray trace when there are', () => {
    const line = new CompactLogFormatter().formatAttributes(attributesOf({ lambdaContext: { ...CONTEXT, coldStart: true }, xRayTraceId: '1-5759e988-bd862e3fe1be46a994272793' }), {}).getAttributes();
    expect(line).toMatchObject({ cold_start: true, xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793' });
  });

  it('formats a line outside an invocation (the local forwarder) without request fields', () => {
    const line = new CompactLogFormatter().formatAttributes(attributesOf({ lambdaContext: undefined }), {}).getAttributes();
    expect(Object.keys(line)).toEqual(['level', 'message', 'timestamp', 'service']);
  });
});
