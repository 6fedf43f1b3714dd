/**
 * A small kubectl-style argument parser: flags may come before or after the command words,
 * as `--flag=value`, `--flag value`, `-n value` or `-nvalue`; `--` ends the flags.
 */
import { CliError } from './errors';
import { parseDurationSetting } from '../shared/go-duration';

export interface FlagSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  description: string;
  default?: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | boolean>;
}

/** Flags every command takes, as kubectl's own connection flags. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: 'namespace', short: 'n', type: 'string', description: 'The namespace of the InferenceService; defaults to the kubeconfig context\'s namespace, or default' },
  { name: 'context', type: 'string', description: 'The kubeconfig context to use' },
  { name: 'kubeconfig', type: 'string', description: 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' },
  { name: 'request-timeout', type: 'string', description: 'How long to wait for each API request, as in 10s; 0 sets no limit of its own', default: '0' },
  { name: 'help', short: 'h', type: 'boolean', description: 'Print help for the command' },
];

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const byShort = new Map(specs.filter((spec) => spec.short).map((spec) => [spec.short as string, spec]));
  const positionals: string[] = [];
  const flags = new Map<string, string | boolean>();
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith('-') || token === '-') {
      positionals.push(token);
      continue;
    }
    const { spec, inline } = lookup(token, byName, byShort);
    if (spec.type === 'boolean') {
      flags.set(spec.name, parseBoolean(spec.name, inline));
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw new CliError(`flag needs an argument: --${spec.name}`);
      i++;
    }
    flags.set(spec.name, value);
  }
  return { positionals, flags };
}

function lookup(
  token: string,
  byName: Map<string, FlagSpec>,
  byShort: Map<string, FlagSpec>,
): { spec: FlagSpec; inline: string | undefined } {
  if (token.startsWith('--')) {
    const eq = token.indexOf('=');
    const name = eq < 0 ? token.slice(2) : token.slice(2, eq);
    const spec = byName.get(name);
    if (!spec) throw new CliError(`unknown flag: --${name}`);
    return { spec, inline: eq < 0 ? undefined : token.slice(eq + 1) };
  }
  const short = token.slice(1, 2);
  const spec = byShort.get(short);
  if (!spec) throw new CliError(`unknown shorthand flag: '${short}' in ${token}`);
  const rest = token.slice(2);
  if (rest === '') return { spec, inline: undefined };
  return { spec, inline: rest.startsWith('=') ? rest.slice(1) : rest };
}

function parseBoolean(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === 'true') return true;
  if (raw === 'false') return false;
  throw new CliError(`invalid argument "${raw}" for "--${name}" flag: must be true or false`);
}

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.flags.get(name) === true;
}

/**
 * Parses a duration flag as Go's `time.ParseDuration` does (`45s`, `1m30s`, `1.5h`,
 * `500ms`); a bare number counts seconds, as kubectl's --request-timeout does.
 */
export function parseDurationFlag(name: string, raw: string): number {
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  try {
    return parseDurationSetting(`--${name}`, text);
  } catch {
    throw new CliError(`invalid argument "${raw}" for "--${name}" flag: use a duration such as 30s, 1m or 1h30m`);
  }
}

/** Renders flags as a help section, like cobra's. */
export function formatFlagHelp(specs: readonly FlagSpec[]): string {
  const lines = specs.map((spec) => {
    const names = spec.short ? `-${spec.short}, --${spec.name}` : `    --${spec.name}`;
    const arg = spec.type === 'string' ? ' string' : '';
    const def = spec.default !== undefined ? ` (default "${spec.default}")` : '';
    return [`  ${names}${arg}`, `${spec.description}${def}`] as const;
  });
  const width = Math.max(...lines.map(([left]) => left.length));
  return lines.map(([left, right]) => `${left.padEnd(width + 3)}${right}\n`).join('');
}
