/**
 * The import rule of the layers (docs/architecture.md, "Layers") and no circle between
 * files. `npm run lint` runs it after ESLint; it prints one line per problem and exits
 * non-zero when there is any.
 *
 * Every relative import, re-export and dynamic `import()` of the TypeScript files under
 * shared/, functions/, local/, cli/, test/, scripts/ and bench/ is resolved to a file (as
 * the bundler resolution of tsconfig.json does: extensionless, `.js` for `.ts`, a folder's
 * `index.ts`). Type-only imports count: a circle of types is still a circle a reader has
 * to hold in mind, and ESLint's import plugins skip them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The folders whose files are read; the first four are the code, the rest may import anything. */
export const SCANNED_FOLDERS = ['shared', 'functions', 'local', 'cli', 'test', 'scripts', 'bench'] as const;

export type Layer = 'domain' | 'ports' | 'use-cases' | 'adapters' | 'app' | 'functions' | 'entry';

/** Where a file sits: its layer and, in use-cases/, its capability folder ('' at the root). */
export interface Place {
  layer: Layer;
  useCase?: string;
}

/** What each layer may import besides itself, and the one-sentence rule printed with a refusal. */
export const LAYER_RULES: Readonly<Record<Layer, { imports: readonly Layer[]; rule: string }>> = {
  domain: { imports: ['domain'], rule: 'domain/ imports only domain/ (and node built-ins)' },
  ports: { imports: ['domain', 'ports'], rule: 'ports/ import only domain/ and ports/ (and node built-ins)' },
  'use-cases': { imports: ['domain', 'ports', 'use-cases'], rule: 'use-cases/ import only domain/, ports/ and the helpers at the root of use-cases/' },
  adapters: { imports: ['domain', 'ports', 'adapters'], rule: 'adapters/ import only domain/, ports/ and other adapters' },
  app: { imports: ['domain', 'ports', 'use-cases', 'adapters', 'app'], rule: 'app/ imports shared/ only; nothing in shared/ but app/ imports app/' },
  functions: { imports: ['use-cases', 'app'], rule: 'a function handler imports its use-cases and app/, nothing else of shared/' },
  entry: { imports: ['domain', 'ports', 'use-cases', 'adapters', 'app', 'functions', 'entry'], rule: '' },
};

/** Packages only adapters (and the entry points) import, so that every call to them sits behind a port. */
const ADAPTER_PACKAGES = /^(@aws-sdk\/|@smithy\/|@kubernetes\/client-node(\/|$))/;

export interface LayerProblem {
  file: string;
  line?: number;
  message: string;
}

/** The layer of a repository-relative path (forward slashes); undefined for a file in shared/ outside every layer. */
export function placeOf(file: string): Place | undefined {
  const [top, second, third] = file.split('/');
  if (top === 'functions') return { layer: 'functions' };
  if (top !== 'shared') return { layer: 'entry' };
  switch (second) {
    case 'domain':
      return { layer: 'domain' };
    case 'ports':
      return { layer: 'ports' };
    case 'adapters':
      return { layer: 'adapters' };
    case 'app':
      return { layer: 'app' };
    case 'use-cases':
      return { layer: 'use-cases', useCase: third !== undefined && file.split('/').length > 3 ? third : '' };
    default:
      return undefined;
  }
}

/** The module specifiers a file imports, with their lines (imports, re-exports, `import()`, `import x = require()`). */
export function specifiersOf(text: string): Array<{ specifier: string; line: number }> {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const lineOf = (position: number): number => text.slice(0, position).split('\n').length;
  return importedFiles.map((entry) => ({ specifier: entry.fileName, line: lineOf(entry.pos) }));
}

/** The file a relative specifier names among `files`, resolved as tsconfig's bundler resolution does; undefined for a package or a non-source file. */
export function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base, `${base}.ts`, `${base}.mts`, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}/index.ts`];
  return candidates.find((candidate) => files.has(candidate));
}

function useCaseImportProblem(from: Place, to: Place): string | undefined {
  if (from.layer !== 'use-cases' || to.layer !== 'use-cases' || to.useCase === '' || to.useCase === from.useCase) return undefined;
  return from.useCase === ''
    ? 'the helpers at the root of use-cases/ import no use-case folder'
    : `a use-case folder imports no other use-case folder (${from.useCase} -> ${to.useCase}): move what they share to the root of use-cases/`;
}

/** The wrong-way imports of one file. */
function directionProblems(file: string, text: string, files: ReadonlySet<string>): { problems: LayerProblem[]; edges: string[] } {
  const problems: LayerProblem[] = [];
  const edges: string[] = [];
  const from = placeOf(file);
  if (!from) problems.push({ file, message: 'lies in shared/ outside every layer: move it into domain/, ports/, use-cases/, adapters/ or app/' });
  for (const { specifier, line } of specifiersOf(text)) {
    const target = resolveSpecifier(file, specifier, files);
    if (target !== undefined) edges.push(target);
    if (!from) continue;
    if (target === undefined) {
      const isPackage = !specifier.startsWith('.');
      if (isPackage && (from.layer === 'domain' || from.layer === 'ports') && !specifier.startsWith('node:')) {
        problems.push({ file, line, message: `imports the package '${specifier}': ${LAYER_RULES[from.layer].rule}` });
      } else if (isPackage && ADAPTER_PACKAGES.test(specifier) && from.layer !== 'adapters' && from.layer !== 'entry') {
        problems.push({ file, line, message: `imports '${specifier}': only adapters/ call the AWS SDK and client-node` });
      }
      continue;
    }
    const to = placeOf(target);
    if (!to) continue;
    const sameFunction = from.layer === 'functions' && to.layer === 'functions' && file.split('/')[1] === target.split('/')[1];
    if (!LAYER_RULES[from.layer].imports.includes(to.layer) && !sameFunction) {
      problems.push({ file, line, message: `imports ${target} ('${specifier}'): ${LAYER_RULES[from.layer].rule}` });
      continue;
    }
    const crossing = useCaseImportProblem(from, to);
    if (crossing) problems.push({ file, line, message: `imports ${target} ('${specifier}'): ${crossing}` });
  }
  return { problems, edges };
}

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
export function findCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  // Iterative, so a long import chain cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const frames: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next);
    next += 1;
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: string; edge: number };
      const targets = graph.get(frame.node) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge] as string;
        frame.edge += 1;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next);
          next += 1;
          stack.push(target);
          onStack.add(target);
          frames.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) circles.push(component.sort());
    }
  }
  return circles;
}

/** One import path around a circle, from its first file back to it, for the message. */
function walkAround(circle: readonly string[], graph: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(circle);
  const start = circle[0] as string;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...circle, start];
}

/** Every problem of a set of sources (repository-relative path -> text): wrong-way imports and circles. */
export function checkLayers(sources: ReadonlyMap<string, string>): LayerProblem[] {
  const files = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  const problems: LayerProblem[] = [];
  for (const [file, text] of sources) {
    const result = directionProblems(file, text, files);
    problems.push(...result.problems);
    graph.set(file, [...new Set(result.edges)]);
  }
  for (const circle of findCircles(graph)) {
    problems.push({ file: circle[0] as string, message: `import circle: ${walkAround(circle, graph).join(' -> ')}` });
  }
  return problems;
}

/** The TypeScript sources of the scanned folders, keyed by repository-relative path. */
export function readSources(root: string = ROOT): Map<string, string> {
  const sources = new Map<string, string>();
  const visit = (folder: string): void => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) visit(path);
      } else if (/\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        sources.set(path, readFileSync(join(root, path), 'utf8'));
      }
    }
  };
  for (const folder of SCANNED_FOLDERS) visit(folder);
  return sources;
}

function main(): number {
  const problems = checkLayers(readSources());
  for (const problem of problems) {
    process.stderr.write(`${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}\n`);
  }
  if (problems.length > 0) process.stderr.write(`check-layers: ${problems.length} problem(s); the rule per layer is in docs/architecture.md, "Layers"\n`);
  return problems.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
