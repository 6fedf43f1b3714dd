/**
 * Shell completion through kubectl's plugin protocol: kubectl runs `kubectl_complete-ome`
 * with the words after `kubectl ome` (the last is the word being completed), which calls
 * `kubectl-ome __complete …`. The answer is cobra's: candidates one per line, then
 * `:<directive>`.
 */
import type { FlagSpec } from './args';
import type { Command } from './command';

/** cobra's ShellCompDirective bits. */
export const CompletionDirective = {
  default: 0,
  error: 1,
  noSpace: 2,
  noFileComp: 4,
} as const;

/** Where names come from; each may fail, and completion then offers nothing for it. */
export interface CompletionSource {
  inferenceServices(flags: Map<string, string>): Promise<string[]>;
  namespaces(flags: Map<string, string>): Promise<string[]>;
  /** Registered cluster ids, from the registry the words' --table and --dynamodb-endpoint name. */
  clusterIds(flags: Map<string, string>): Promise<string[]>;
}

export interface Completion {
  candidates: string[];
  directive: number;
}

/** cobra's wire format. */
export function formatCompletion(completion: Completion): string {
  return `${completion.candidates.map((candidate) => `${candidate}\n`).join('')}:${completion.directive}\n`;
}

interface Scan {
  positionals: string[];
  /** String flags already given, by long name (for -n, --context, --kubeconfig). */
  flags: Map<string, string>;
  /** The string flag whose value is the word being completed, when the word before it is that flag. */
  pendingFlag?: FlagSpec;
}

function scan(words: readonly string[], specs: readonly FlagSpec[]): Scan {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const byShort = new Map(specs.filter((spec) => spec.short).map((spec) => [spec.short as string, spec]));
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  let pendingFlag: FlagSpec | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (!word.startsWith('-') || word === '-') {
      positionals.push(word);
      continue;
    }
    const long = word.startsWith('--');
    const eq = word.indexOf('=');
    const name = long ? word.slice(2, eq < 0 ? undefined : eq) : word.slice(1, 2);
    const spec = long ? byName.get(name) : byShort.get(name);
    if (!spec || spec.type !== 'string') continue;
    const inline = long ? (eq < 0 ? undefined : word.slice(eq + 1)) : word.slice(2).replace(/^=/, '') || undefined;
    if (inline !== undefined) {
      flags.set(spec.name, inline);
    } else if (i + 1 < words.length) {
      flags.set(spec.name, words[i + 1] as string);
      i++;
    } else {
      pendingFlag = spec;
    }
  }
  return { positionals, flags, ...(pendingFlag ? { pendingFlag } : {}) };
}

const startingWith = (prefix: string) => (candidate: string) => candidate.startsWith(prefix);

async function flagValues(spec: FlagSpec, flags: Map<string, string>, source: CompletionSource): Promise<string[]> {
  if (spec.values) return [...spec.values];
  if (spec.name === 'namespace') return source.namespaces(flags).catch(() => []);
  return [];
}

/**
 * Completes the last of `words` against the command table: command words, flags (after
 * `-`), a flag's values, and InferenceService names for commands that take one.
 */
export async function completeWords(
  commands: readonly Command[],
  globalFlags: readonly FlagSpec[],
  words: readonly string[],
  source: CompletionSource,
): Promise<Completion> {
  const toComplete = words.at(-1) ?? '';
  const visible = commands.filter((command) => !command.hidden);
  const allFlags = [...globalFlags, ...visible.flatMap((command) => command.flags)];
  const { positionals, flags, pendingFlag } = scan(words.slice(0, -1), allFlags);
  const command = visible.find((candidate) => {
    const parts = candidate.path.split(' ');
    return parts.every((part, i) => positionals[i] === part);
  });
  const noFiles = CompletionDirective.noFileComp;

  if (pendingFlag) {
    return { candidates: (await flagValues(pendingFlag, flags, source)).filter(startingWith(toComplete)), directive: noFiles };
  }
  if (toComplete.startsWith('-')) {
    const specs = [...(command?.flags ?? []), ...globalFlags].filter((spec) => !spec.hidden);
    const eq = toComplete.indexOf('=');
    if (toComplete.startsWith('--') && eq > 0) {
      const spec = specs.find((candidate) => candidate.name === toComplete.slice(2, eq));
      const prefix = toComplete.slice(0, eq + 1);
      const values = spec && spec.type === 'string' ? await flagValues(spec, flags, source) : [];
      return { candidates: values.map((value) => `${prefix}${value}`).filter(startingWith(toComplete)), directive: noFiles };
    }
    const names = [...new Set(specs.map((spec) => `--${spec.name}`))];
    return { candidates: names.filter(startingWith(toComplete)), directive: noFiles };
  }
  if (command) {
    const operands = positionals.slice(command.path.split(' ').length);
    if (command.operand && operands.length === 0) {
      const read = command.operand === 'cluster' ? source.clusterIds(flags) : source.inferenceServices(flags);
      const names = await read.catch(() => []);
      return { candidates: names.filter(startingWith(toComplete)), directive: noFiles };
    }
    return { candidates: [], directive: noFiles };
  }
  const next = new Set<string>();
  for (const candidate of visible) {
    const parts = candidate.path.split(' ');
    if (parts.length > positionals.length && positionals.every((word, i) => parts[i] === word)) next.add(parts[positionals.length] as string);
  }
  return { candidates: [...next].filter(startingWith(toComplete)), directive: noFiles };
}
