/**
 * The template linters' suppressions (scripts/lint-template.sh runs cfn-lint and checkov
 * from Python, outside `npm test`): each lives in a resource's Metadata in serverless.yml,
 * each checkov skip gives its reason, and the table in docs/operations.md ("Template
 * linters") names the same checks.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

interface LinterMetadata {
  'cfn-lint'?: { config?: { ignore_checks?: string[] } };
  checkov?: { skip?: { id?: string; comment?: string }[] };
}
type ResourceSection = Record<string, { Metadata?: LinterMetadata } | undefined>;

interface Suppression {
  linter: 'cfn-lint' | 'checkov';
  check: string;
  resource: string;
  reason?: string;
}

const read = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8');

/** Suppressions on the resources declared under `resources` and on generated ones (`resources.extensions`). */
function suppressionsOf(serverlessYml: string): Suppression[] {
  const doc = parse(serverlessYml) as { resources?: { Resources?: ResourceSection; extensions?: ResourceSection } };
  const sections = [doc.resources?.Resources ?? {}, doc.resources?.extensions ?? {}];
  return sections.flatMap((section) =>
    Object.entries(section).flatMap(([resource, definition]): Suppression[] => [
      ...(definition?.Metadata?.['cfn-lint']?.config?.ignore_checks ?? []).map((check) => ({ linter: 'cfn-lint' as const, check, resource })),
      ...(definition?.Metadata?.checkov?.skip ?? []).map((skip) => ({ linter: 'checkov' as const, check: String(skip.id), resource, reason: skip.comment })),
    ]),
  );
}

/** `<linter> <check>` of each row of the "Template linters" table. */
function documentedChecks(operationsMd: string): string[] {
  const section = operationsMd.split(/^## /m).find((part) => part.startsWith('Template linters\n')) ?? '';
  return section
    .split('\n')
    .map((line) => /^\| (cfn-lint|checkov) \| `([A-Z0-9_]+)`/.exec(line))
    .filter((match) => match !== null)
    .map(([, linter, check]) => `${linter} ${check}`);
}

describe('serverless.yml: template linter suppressions', () => {
  const suppressions = suppressionsOf(read('../../serverless.yml'));

  it('suppresses something (the parse found the Metadata)', () => {
    expect(suppressions.filter((s) => s.linter === 'cfn-lint').length).toBeGreaterThan(0);
    expect(suppressions.filter((s) => s.linter === 'checkov').length).toBeGreaterThan(0);
  });

  it('gives every checkov skip a reason, one reason per check wherever it is skipped', () => {
    // Prepare
    const skips = suppressions.filter((s) => s.linter === 'checkov');

    // Act
    const unreasoned = skips.filter((s) => !s.reason?.trim()).map((s) => `${s.check} on ${s.resource}`);
    const reasonsByCheck = new Map<string, Set<string | undefined>>();
    for (const skip of skips) reasonsByCheck.set(skip.check, (reasonsByCheck.get(skip.check) ?? new Set()).add(skip.reason));

    // Assess
    expect(unreasoned).toEqual([]);
    for (const [check, reasons] of reasonsByCheck) expect(reasons.size, check).toBe(1);
  });

  it('names in docs/operations.md exactly the checks serverless.yml suppresses, once each', () => {
    // Prepare
    const documented = documentedChecks(read('../../docs/operations.md'));

    // Act
    const suppressed = [...new Set(suppressions.map((s) => `${s.linter} ${s.check}`))];

    // Assess
    expect(documented.length).toBe(new Set(documented).size);
    expect([...documented].sort()).toEqual(suppressed.sort());
  });
});
