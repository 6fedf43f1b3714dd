import { describe, expect, it } from 'vitest';
import { formatGoFloat, parseGoFloat } from '../../shared/domain/analysis/go-float';

describe('Function: formatGoFloat', () => {
  // Expected texts are C's %g (identical to Go's FormatFloat 'g' with precision 6).
  it.each<[number, string]>([
    [0.5, '0.5'],
    [0.04, '0.04'],
    [0.01, '0.01'],
    [100, '100'],
    [123456, '123456'],
    [1234567, '1.23457e+06'],
    [1e6, '1e+06'],
    [999999.5, '1e+06'],
    [123456.5, '123456'], // an exact tie rounds half to even
    [123457.5, '123458'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [0.000123456, '0.000123456'],
    [12.3456789, '12.3457'],
    [1 / 3, '0.333333'],
    [0.1 + 0.2, '0.3'],
    [-2.5, '-2.5'],
    [1e21, '1e+21'],
    [5e-324, '4.94066e-324'],
    [1.7976931348623157e308, '1.79769e+308'],
    [0, '0'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
  ])('formats %d as %s', (value, want) => {
    expect(formatGoFloat(value)).toBe(want);
  });
});

describe('Function: parseGoFloat', () => {
  it.each<[string, number | undefined]>([
    ['0.05', 0.05],
    ['-1.5e3', -1500],
    ['.5', 0.5],
    ['5.', 5],
    ['+Inf', Number.POSITIVE_INFINITY],
    ['-inf', Number.NEGATIVE_INFINITY],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['', undefined],
    ['abc', undefined],
    ['1,5', undefined],
    ['0x10', undefined],
    [' 1', undefined],
    ['+NaN', undefined],
  ])('reads %j', (text, want) => {
    expect(parseGoFloat(text)).toBe(want);
  });

  it('reads NaN', () => {
    expect(parseGoFloat('NaN')).toBeNaN();
  });
});
