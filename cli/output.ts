/**
 * Printing in kubectl's conventions: aligned tables (columns separated by at least three
 * spaces, as kubectl's tabwriter pads them), and whole reports as JSON or YAML.
 */
import { stringify as toYaml } from 'yaml';

import { CliError } from './errors';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';

const FORMATS: readonly OutputFormat[] = ['table', 'wide', 'json', 'yaml'];

export function parseOutputFormat(raw: string | undefined): OutputFormat {
  if (raw === undefined || raw === '') return 'table';
  if ((FORMATS as readonly string[]).includes(raw)) return raw as OutputFormat;
  throw new CliError(`unsupported output format "${raw}"; use table, wide, json or yaml`);
}

/** A row is a list of cells; `undefined` and '' print as `-`. */
export type Row = ReadonlyArray<string | undefined>;

const COLUMN_GAP = 3;

/** Formats rows under headers with every column but the last padded to its widest cell. */
export function formatTable(headers: readonly string[], rows: readonly Row[]): string {
  const cells = [headers, ...rows].map((row) => headers.map((_, i) => cellText(row[i])));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + COLUMN_GAP)))
        .join('')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

function cellText(value: string | undefined): string {
  return value === undefined || value === '' ? '-' : value;
}

/** Keeps a value within `width` characters: a longer one keeps its first width-3 and ends in `...`. */
export function boundCell(value: string, width = 56): string {
  return value.length <= width ? value : `${value.slice(0, width - 3)}...`;
}

/** Prints a whole report; JSON with two-space indent like kubectl, YAML as a block document. */
export function formatStructured(value: unknown, format: 'json' | 'yaml'): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  return toYaml(value, { lineWidth: 0 });
}
