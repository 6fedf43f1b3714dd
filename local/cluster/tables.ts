/**
 * `Table` responses (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), which is
 * what `kubectl get` prints: a CRD's `additionalPrinterColumns` (Name plus Age when it
 * declares none) or a built-in kind's columns, with ages rendered like the server does.
 */
import { evaluateJsonPath } from './jsonpath';
import type { KubeObject, PrinterColumn, ResourceDef } from './registry';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** apimachinery's `duration.HumanDuration`, which `AGE` columns use. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** Age of a timestamp as a table cell; `<unknown>` when there is none. */
export function ageCell(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const at = Date.parse(timestamp);
  return Number.isNaN(at) ? '<invalid>' : humanDuration(now - at);
}

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

export const NAME_COLUMN: TableColumnDefinition = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };

const DEFAULT_CUSTOM_COLUMNS: PrinterColumn[] = [
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' },
];

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function customCell(column: PrinterColumn, object: KubeObject, now: number): unknown {
  let results: unknown[];
  try {
    results = evaluateJsonPath(object, column.jsonPath);
  } catch {
    return null;
  }
  const value = results[0];
  if (results.length === 0 || value === undefined || value === null) return null;
  switch (column.type) {
    case 'string':
      return textOf(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? ageCell(value, now) : null;
    default:
      return null;
  }
}

function columnsOf(def: ResourceDef): TableColumnDefinition[] {
  if (def.builtinTable) {
    return def.builtinTable.columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 }));
  }
  const custom = def.printerColumns && def.printerColumns.length > 0 ? def.printerColumns : DEFAULT_CUSTOM_COLUMNS;
  return [
    NAME_COLUMN,
    ...custom.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
  ];
}

function cellsOf(def: ResourceDef, object: KubeObject, now: number): unknown[] {
  if (def.builtinTable) return def.builtinTable.cells(object, now);
  const custom = def.printerColumns && def.printerColumns.length > 0 ? def.printerColumns : DEFAULT_CUSTOM_COLUMNS;
  return [object.metadata.name ?? '', ...custom.map((c) => customCell(c, object, now))];
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export interface TableOptions {
  include: IncludeObject;
  /** `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`, whichever the client accepted. */
  apiVersion: string;
  /** Leave out column definitions (watch events after the first carry none). */
  noHeaders?: boolean;
  now?: number;
}

export function buildTable(def: ResourceDef, objects: KubeObject[], listMeta: Table['metadata'], options: TableOptions): Table {
  const now = options.now ?? Date.now();
  return {
    kind: 'Table',
    apiVersion: options.apiVersion,
    metadata: listMeta,
    columnDefinitions: options.noHeaders ? [] : columnsOf(def),
    rows: objects.map((object) => {
      const row: TableRow = { cells: cellsOf(def, object, now) };
      const embedded = rowObject(object, options.include);
      if (embedded !== undefined) row.object = embedded;
      return row;
    }),
  };
}
