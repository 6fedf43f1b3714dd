/**
 * CustomResourceDefinitions: validating them, turning each served version into a
 * `ResourceDef` the server routes, lists in discovery and prints with its
 * `additionalPrinterColumns`, and the status the apiextensions controllers report.
 */
import { fieldError, type FieldError } from './api-errors';
import type { KubeObject, PrinterColumn, ResourceDef } from './registry';
import type { JsonSchema } from './schema';

interface CrdNames {
  plural?: string;
  singular?: string;
  kind?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

interface CrdVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JsonSchema };
  subresources?: { status?: unknown; scale?: unknown };
  additionalPrinterColumns?: PrinterColumn[];
}

interface CrdSpec {
  group?: string;
  names?: CrdNames;
  scope?: string;
  versions?: CrdVersion[];
}

function specOf(crd: KubeObject): CrdSpec {
  return (crd.spec ?? {}) as CrdSpec;
}

/** Fills `singular` and `listKind` as the server's defaulting does. */
export function defaultCrd(crd: KubeObject): void {
  const names = specOf(crd).names;
  if (!names) return;
  if (!names.singular && names.kind) names.singular = names.kind.toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
}

export function validateCrd(crd: KubeObject): FieldError[] {
  const spec = specOf(crd);
  const errors: FieldError[] = [];
  const group = spec.group ?? '';
  const names = spec.names ?? {};
  if (group === '') errors.push(fieldError('FieldValueRequired', 'spec.group', undefined));
  else if (!group.includes('.')) errors.push(fieldError('FieldValueInvalid', 'spec.group', group, 'should be a domain with at least one dot'));
  if (!names.plural) errors.push(fieldError('FieldValueRequired', 'spec.names.plural', undefined));
  if (!names.kind) errors.push(fieldError('FieldValueRequired', 'spec.names.kind', undefined));
  if (names.plural && group && crd.metadata.name !== `${names.plural}.${group}`) {
    errors.push(fieldError('FieldValueInvalid', 'metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push(fieldError('FieldValueNotSupported', 'spec.scope', spec.scope ?? '', 'supported values: "Cluster", "Namespaced"'));
  }
  const versions = spec.versions ?? [];
  if (versions.length === 0) errors.push(fieldError('FieldValueInvalid', 'spec.versions', versions, 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v.storage).length !== 1) {
    errors.push(fieldError('FieldValueInvalid', 'spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
  }
  versions.forEach((version, i) => {
    if (!version.name) errors.push(fieldError('FieldValueRequired', `spec.versions[${i}].name`, undefined));
    if (!version.schema?.openAPIV3Schema) {
      errors.push(fieldError('FieldValueRequired', `spec.versions[${i}].schema.openAPIV3Schema`, undefined, 'schemas are required'));
    }
  });
  return errors;
}

/** One definition per served version. */
export function resourcesFromCrd(crd: KubeObject): ResourceDef[] {
  const spec = specOf(crd);
  const names = spec.names ?? {};
  const kind = names.kind ?? '';
  return (spec.versions ?? [])
    .filter((version) => version.served !== false && version.name)
    .map((version) => {
      const def: ResourceDef = {
        group: spec.group ?? '',
        version: version.name ?? '',
        plural: names.plural ?? '',
        singular: names.singular ?? kind.toLowerCase(),
        kind,
        listKind: names.listKind ?? `${kind}List`,
        namespaced: spec.scope !== 'Cluster',
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        statusSubresource: version.subresources?.status !== undefined && version.subresources.status !== null,
        tracksGeneration: true,
        allowUnconditionalUpdate: false,
        extraFields: {},
        printerColumns: version.additionalPrinterColumns ?? [],
        crdName: crd.metadata.name ?? '',
      };
      if (version.schema?.openAPIV3Schema) def.schema = version.schema.openAPIV3Schema;
      return def;
    });
}

/** The status the naming and establishing controllers write once the names are accepted. */
export function establishedStatus(crd: KubeObject, now: string): Record<string, unknown> {
  const spec = specOf(crd);
  const names = { ...(spec.names ?? {}) };
  const storage = (spec.versions ?? []).find((v) => v.storage)?.name;
  return {
    conditions: [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ],
    acceptedNames: names,
    storedVersions: storage ? [storage] : [],
  };
}
