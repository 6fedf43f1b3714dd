import { describe, expect, it } from 'vitest';
import { parseQueryResponse, type QueryReading } from '../../shared/domain/analysis/query-result';

const ok = (data: unknown) => JSON.stringify({ status: 'success', data });
const vector = (...values: string[]) => ok({ resultType: 'vector', result: values.map((value, i) => ({ metric: { pod: `p${i}` }, value: [1700000000, value] })) });

describe('Function: parseQueryResponse', () => {
  it.each<[string, number, string, QueryReading]>([
    ['a one-series vector', 200, vector('0.5'), { kind: 'values', values: [0.5] }],
    ['a vector with a series per pod', 200, vector('0.01', '0.04'), { kind: 'values', values: [0.01, 0.04] }],
    ['an empty vector', 200, vector(), { kind: 'noData' }],
    ['a vector of NaN only (a ratio over zero requests)', 200, vector('NaN'), { kind: 'noData' }],
    ['a vector of infinities only (x/0)', 200, vector('+Inf', '-Inf'), { kind: 'noData' }],
    ['NaN and Inf series are skipped, the rest read', 200, vector('NaN', '0.2', '+Inf'), { kind: 'values', values: [0.2] }],
    ['a scalar', 200, ok({ resultType: 'scalar', result: [1700000000, '3'] }), { kind: 'values', values: [3] }],
    ['a NaN scalar', 200, ok({ resultType: 'scalar', result: [1700000000, 'NaN'] }), { kind: 'noData' }],
    ['a numeric string', 200, ok({ resultType: 'string', result: [1700000000, '0.25'] }), { kind: 'values', values: [0.25] }],
    ['a non-numeric string', 200, ok({ resultType: 'string', result: [1700000000, 'abc'] }), { kind: 'error', message: 'non-numeric string result "abc"' }],
    ['a range vector', 200, ok({ resultType: 'matrix', result: [] }), { kind: 'error', message: 'unsupported prometheus result type model.Matrix (expected scalar or vector)' }],
    ['an unknown result type', 200, ok({ resultType: 'histogram', result: [] }), { kind: 'error', message: 'bad_response: unexpected value type "histogram"', errorType: 'bad_response' }],
    [
      'a syntax error (400 bad_data)',
      400,
      JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:5: parse error: unexpected end of input' }),
      { kind: 'error', message: 'bad_data: invalid parameter "query": 1:5: parse error: unexpected end of input', errorType: 'bad_data' },
    ],
    ['an execution error (422)', 422, JSON.stringify({ status: 'error', errorType: 'execution', error: 'many-to-many matching' }), { kind: 'error', message: 'execution: many-to-many matching', errorType: 'execution' }],
    ['a 503 with an error body', 503, JSON.stringify({ status: 'error', errorType: 'unavailable', error: 'not ready' }), { kind: 'error', message: 'unavailable: not ready', errorType: 'unavailable' }],
    ['a 400 claiming success', 400, vector('1'), { kind: 'error', message: 'bad_response: inconsistent body for response code', errorType: 'bad_response' }],
    ['a 502 from a proxy', 502, '<html>bad gateway</html>', { kind: 'error', message: 'server_error: server error: 502', errorType: 'server_error' }],
    ['a 401 from a proxy', 401, 'unauthorized', { kind: 'error', message: 'client_error: client error: 401', errorType: 'client_error' }],
    ['a 200 that is not JSON', 200, '<html><body>model server</body></html>', { kind: 'error', message: expect.stringMatching(/^bad_response: /) as unknown as string, errorType: 'bad_response' }],
    ['JSON that is not an object', 200, '[1,2]', { kind: 'error', message: 'bad_response: response body is not a JSON object', errorType: 'bad_response' }],
    ['a success without data', 200, JSON.stringify({ status: 'success' }), { kind: 'error', message: 'bad_response: response has no data object', errorType: 'bad_response' }],
    ['a malformed sample', 200, ok({ resultType: 'vector', result: [{ metric: {}, value: [1, 2] }] }), { kind: 'error', message: 'bad_response: malformed vector sample', errorType: 'bad_response' }],
  ])('reads %s', (_name, status, body, want) => {
    expect(parseQueryResponse(status, body)).toEqual(want);
  });

  it('refuses a result with more series than the cap, naming both counts', () => {
    expect(parseQueryResponse(200, vector('1', '2', '3'), 2)).toEqual({
      kind: 'error',
      message: 'bad_response: result has 3 series, more than the 2 the plane reads',
      errorType: 'bad_response',
    });
    expect(parseQueryResponse(200, vector('1', '2'), 2)).toEqual({ kind: 'values', values: [1, 2] });
  });
});
