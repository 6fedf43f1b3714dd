import { describe, expect, it } from 'vitest';
import { checkLayers, findCircles, placeOf, readSources } from '../../scripts/check-layers';

/** A source tree of the given files; every file the cases import exists, empty. */
function tree(files: Record<string, string>): Map<string, string> {
  const sources = new Map<string, string>([
    ['shared/domain/errors.ts', ''],
    ['shared/domain/model/index.ts', ''],
    ['shared/ports/cluster.ts', ''],
    ['shared/use-cases/list-all.ts', ''],
    ['shared/use-cases/pinning/pin.ts', ''],
    ['shared/use-cases/fleet/wave.ts', ''],
    ['shared/adapters/dynamodb/store.ts', ''],
    ['shared/app/config.ts', ''],
    ['functions/pin/handler.ts', ''],
    ['local/start.ts', ''],
  ]);
  for (const [file, text] of Object.entries(files)) sources.set(file, text);
  return sources;
}

describe('Function: checkLayers', () => {
  it('passes the repository as it stands', () => {
    expect(checkLayers(readSources())).toEqual([]);
  });

  it.each([
    ['domain importing app', 'shared/domain/rule.ts', "import { loadConfig } from '../app/config';", 'domain/ imports only domain/'],
    ['domain importing a port', 'shared/domain/rule.ts', "import type { ClusterClient } from '../ports/cluster';", 'domain/ imports only domain/'],
    ['domain importing a package', 'shared/domain/rule.ts', "import { parse } from 'yaml';", "imports the package 'yaml'"],
    ['a port importing an adapter', 'shared/ports/store.ts', "export type { Table } from '../adapters/dynamodb/store';", 'ports/ import only domain/ and ports/'],
    ['a use-case importing app', 'shared/use-cases/pinning/drift.ts', "import { loadConfig } from '../../app/config';", 'use-cases/ import only domain/, ports/'],
    ['a use-case importing an adapter', 'shared/use-cases/pinning/drift.ts', "const store = await import('../../adapters/dynamodb/store');", 'use-cases/ import only domain/, ports/'],
    ['a use-case importing another use-case folder', 'shared/use-cases/pinning/drift.ts', "import { wave } from '../fleet/wave';", 'a use-case folder imports no other use-case folder (pinning -> fleet)'],
    ['a use-case helper importing a use-case folder', 'shared/use-cases/helper.ts', "import { pin } from './pinning/pin';", 'the helpers at the root of use-cases/ import no use-case folder'],
    ['a use-case importing the AWS SDK', 'shared/use-cases/pinning/drift.ts', "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';", 'only adapters/ call the AWS SDK and client-node'],
    ['an adapter importing a use-case', 'shared/adapters/memory/index.ts', "import type { Wave } from '../../use-cases/fleet/wave.js';", 'adapters/ import only domain/, ports/'],
    ['an adapter importing app', 'shared/adapters/memory/index.ts', "import { loadConfig } from '../../app/config';", 'adapters/ import only domain/, ports/'],
    ['app importing an entry point', 'shared/app/context.ts', "import { start } from '../../local/start';", 'app/ imports shared/ only'],
    ['a handler importing the domain', 'functions/pin/handler.ts', "import { InvalidInputError } from '../../shared/domain/errors';", 'a function handler imports its use-cases and app/'],
    ['a handler importing a port', 'functions/pin/handler.ts', "export * from '../../shared/ports/cluster';", 'a function handler imports its use-cases and app/'],
  ])('refuses %s', (_case, file, text, reason) => {
    // Prepare
    const sources = tree({ [file]: text });

    // Act
    const problems = checkLayers(sources);

    // Assess
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file, line: 1 });
    expect(problems[0]?.message).toContain(reason);
  });

  it.each([
    ['domain importing domain (a folder index, and .js for .ts)', 'shared/domain/rule.ts', "import './model';\nimport { X } from './errors.js';"],
    ['domain importing a node built-in', 'shared/domain/rule.ts', "import { createHash } from 'node:crypto';"],
    ['a port importing the domain', 'shared/ports/store.ts', "import type { E } from '../domain/errors';"],
    ['a use-case importing domain, ports and a use-case helper', 'shared/use-cases/pinning/drift.ts', "import '../../domain/errors';\nimport '../../ports/cluster';\nimport '../list-all';\nimport './pin';"],
    ['an adapter importing domain and ports', 'shared/adapters/memory/index.ts', "import '../../domain/errors';\nimport '../../ports/cluster';\nimport '../dynamodb/store';"],
    ['an adapter importing the AWS SDK', 'shared/adapters/dynamodb/client.ts', "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';"],
    ['app importing every layer of shared/', 'shared/app/context.ts', "import '../domain/errors';\nimport '../ports/cluster';\nimport '../use-cases/pinning/pin';\nimport '../adapters/dynamodb/store';"],
    ['a handler importing its use-case and app/', 'functions/pin/handler.ts', "import '../../shared/use-cases/pinning/pin';\nimport '../../shared/app/config';"],
    ['an entry point importing anything', 'local/control-plane.ts', "import '../shared/adapters/dynamodb/store';\nimport '../functions/pin/handler';\nimport '../shared/domain/errors';"],
  ])('allows %s', (_case, file, text) => {
    expect(checkLayers(tree({ [file]: text }))).toEqual([]);
  });

  it('refuses a file in shared/ outside every layer', () => {
    expect(checkLayers(tree({ 'shared/helpers/util.ts': '' }))).toEqual([
      { file: 'shared/helpers/util.ts', message: expect.stringContaining('outside every layer') },
    ]);
  });

  it('refuses a circle between files, type-only imports included', () => {
    // Prepare: the shape the rollout rules once had.
    const sources = tree({
      'shared/domain/rollout/analysis.ts': "import { formatKubeTime } from './run';",
      'shared/domain/rollout/plan.ts': "import { findAnalysisProblem } from './analysis';",
      'shared/domain/rollout/run.ts': "import type { RenderedPlan } from './plan';",
    });

    // Act
    const problems = checkLayers(sources);

    // Assess
    expect(problems).toEqual([
      {
        file: 'shared/domain/rollout/analysis.ts',
        message: 'import circle: shared/domain/rollout/analysis.ts -> shared/domain/rollout/run.ts -> shared/domain/rollout/plan.ts -> shared/domain/rollout/analysis.ts',
      },
    ]);
  });

  it('refuses a circle outside shared/ too', () => {
    const problems = checkLayers(tree({ 'local/cluster/api.ts': "import { Sim } from './workloads';", 'local/cluster/workloads.ts': "import type { ClusterApi } from './api';" }));
    expect(problems.map((problem) => problem.message)).toEqual(['import circle: local/cluster/api.ts -> local/cluster/workloads.ts -> local/cluster/api.ts']);
  });
});

describe('Function: findCircles', () => {
  it.each([
    ['no circle', [['a', ['b']], ['b', ['c']], ['c', []]], []],
    ['a file importing itself', [['a', ['a']]], [['a']]],
    ['two circles sharing no file', [['a', ['b']], ['b', ['a']], ['c', ['d']], ['d', ['c', 'a']]], [['a', 'b'], ['c', 'd']]],
    ['one circle through a diamond', [['a', ['b', 'c']], ['b', ['d']], ['c', ['d']], ['d', ['a']]], [['a', 'b', 'c', 'd']]],
  ] as Array<[string, Array<[string, string[]]>, string[][]]>)('finds %s', (_case, edges, circles) => {
    expect(findCircles(new Map(edges)).sort()).toEqual(circles);
  });
});

describe('Function: placeOf', () => {
  it.each([
    ['shared/domain/rollout/plan.ts', { layer: 'domain' }],
    ['shared/ports/store.ts', { layer: 'ports' }],
    ['shared/use-cases/reconcile-under-lease.ts', { layer: 'use-cases', useCase: '' }],
    ['shared/use-cases/pinning/pin-inference-service.ts', { layer: 'use-cases', useCase: 'pinning' }],
    ['shared/adapters/memory/index.ts', { layer: 'adapters' }],
    ['shared/app/context.ts', { layer: 'app' }],
    ['functions/pin/handler.ts', { layer: 'functions' }],
    ['cli/app.ts', { layer: 'entry' }],
    ['shared/config.ts', undefined],
  ])('places %s', (file, place) => {
    expect(placeOf(file)).toEqual(place);
  });
});
