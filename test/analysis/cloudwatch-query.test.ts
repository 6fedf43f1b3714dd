/**
 * GetMetricData as an analysis query: the request body, and the answer read as upstream
 * reads a Prometheus vector (each series one value, here its latest datapoint), with AWS's
 * error shapes read as inconclusive readings that say why.
 */
import { describe, expect, it } from 'vitest';
import { cloudWatchEndpoint, getMetricDataBody, parseGetMetricDataResponse, regionOfEndpoint } from '../../shared/domain/analysis/cloudwatch-query';

describe('Function: getMetricDataBody', () => {
  it('asks for the expression over five periods up to the sample time, newest first', () => {
    expect(JSON.parse(getMetricDataBody('SELECT AVG(Latency) FROM "OME/Serving"', new Date('2026-12-01T20:00:00.750Z'), 60))).toEqual({
      MetricDataQueries: [{ Id: 'q', Expression: 'SELECT AVG(Latency) FROM "OME/Serving"', Period: 60, ReturnData: true }],
      StartTime: 1796155200 - 300,
      EndTime: 1796155200,
      ScanBy: 'TimestampDescending',
    });
  });
});

describe('Function: parseGetMetricDataResponse', () => {
  const ok = (results: unknown[]) => JSON.stringify({ MetricDataResults: results, Messages: [] });

  it.each<[string, number, string, unknown]>([
    ['the latest datapoint of one series', 200, ok([{ Id: 'q', Timestamps: [300, 240], Values: [0.01, 0.5], StatusCode: 'Complete' }]), { kind: 'values', values: [0.01] }],
    ['the latest whatever the order listed', 200, ok([{ Id: 'q', Timestamps: [180, 300, 240], Values: [0.3, 0.02, 0.5], StatusCode: 'Complete' }]), { kind: 'values', values: [0.02] }],
    ['one value per series of a GROUP BY', 200, ok([{ Timestamps: [60], Values: [1] }, { Timestamps: [60], Values: [2], StatusCode: 'PartialData' }]), { kind: 'values', values: [1, 2] }],
    ['no datapoint as no data', 200, ok([{ Id: 'q', Timestamps: [], Values: [], StatusCode: 'Complete' }]), { kind: 'noData' }],
    ['no series as no data', 200, ok([]), { kind: 'noData' }],
    ['a series that failed as an error with its messages', 200, JSON.stringify({ MetricDataResults: [{ StatusCode: 'Forbidden' }], Messages: [{ Code: 'Forbidden', Value: 'not authorized' }] }), { kind: 'error', message: 'cloudwatch: Forbidden: not authorized' }],
    ['an AWS error body', 400, JSON.stringify({ __type: 'com.amazonaws.monitoring#InvalidParameterValueException', message: 'Syntax error in query' }), { kind: 'error', message: 'cloudwatch: InvalidParameterValueException: Syntax error in query' }],
    ['a denied call', 403, JSON.stringify({ __type: 'AccessDeniedException', Message: 'User is not authorized to perform cloudwatch:GetMetricData' }), { kind: 'error', message: 'cloudwatch: AccessDeniedException: User is not authorized to perform cloudwatch:GetMetricData' }],
    ['an error status without a body', 503, '', { kind: 'error', message: 'cloudwatch: HTTP 503' }],
    ['a 200 that is not JSON', 200, '<html>', { kind: 'error', message: 'cloudwatch: response body is not a JSON object' }],
    ['a 200 without results', 200, '{}', { kind: 'error', message: 'cloudwatch: response has no MetricDataResults' }],
  ])('reads %s', (_name, status, body, want) => {
    expect(parseGetMetricDataResponse(status, body)).toEqual(want);
  });

  it('refuses more series than it reads', () => {
    const many = ok(Array.from({ length: 3 }, () => ({ Timestamps: [1], Values: [1] })));
    expect(parseGetMetricDataResponse(200, many, 2)).toEqual({ kind: 'error', message: 'cloudwatch: the query returned more than 2 series' });
  });
});

describe('Endpoints and regions', () => {
  it.each([
    ['eu-west-1', 'https://monitoring.eu-west-1.amazonaws.com'],
    ['cn-north-1', 'https://monitoring.cn-north-1.amazonaws.com.cn'],
  ])('CloudWatch in %s is at %s', (region, endpoint) => {
    expect(cloudWatchEndpoint(region)).toBe(endpoint);
  });

  it.each([
    ['monitoring.eu-west-1.amazonaws.com', 'eu-west-1'],
    ['aps-workspaces.us-gov-west-1.amazonaws.com', 'us-gov-west-1'],
    ['aps-workspaces.cn-northwest-1.amazonaws.com.cn', 'cn-northwest-1'],
    ['prometheus.monitoring.svc', undefined],
    ['monitoring.eu-west-1.amazonaws.com.evil.example', undefined],
  ])('%s names the region %s', (host, region) => {
    expect(regionOfEndpoint(host)).toBe(region);
  });
});
