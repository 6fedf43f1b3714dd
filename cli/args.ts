/**
 * kubectl-style arguments: flags may come before or after the command words, as
 * `--flag=value`, `--flag value`, `-n value`, `-nvalue` or `-n=value`; `--` ends the flags.
 * node:util's parseArgs splits the words into tokens; the rules it does not cover (pflag's
 * `-n=value`, `--yes=false`, repeatable flags, kubectl's error messages) are applied here.
 */
import { parseArgs as tokenize } from 'node:util';

import { CliError } from './errors';
import { parseDurationSetting } from '../shared/domain/go-duration';

export interface FlagSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  description: string;
  default?: string;
  /** A string flag that may be given more than once (`--as-group a --as-group b`). */
  multiple?: boolean;
  /** Left out of help and completion. */
  hidden?: boolean;
  /** The values completion offers. */
  values?: readonly string[];
}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | boolean | string[]>;
}

/** Flags every command takes, as kubectl's own connection flags. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: 'namespace', short: 'n', type: 'string', description: 'The namespace of the InferenceService; defaults to the kubeconfig context\'s namespace, or default' },
  { name: 'context', type: 'string', description: 'The kubeconfig context to use' },
  { name: 'kubeconfig', type: 'string', description: 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' },
  { name: 'cluster', type: 'string', description: 'The kubeconfig cluster to use' },
  { name: 'user', type: 'string', description: 'The kubeconfig user to use' },
  { name: 'server', short: 's', type: 'string', description: 'The address and port of the Kubernetes API server' },
  { name: 'token', type: 'string', description: 'Bearer token for authentication to the API server' },
  { name: 'certificate-authority', type: 'string', description: 'Path to a cert file for the certificate authority' },
  { name: 'insecure-skip-tls-verify', type: 'boolean', description: 'Do not check the server\'s certificate (makes HTTPS connections insecure)' },
  { name: 'as', type: 'string', description: 'Username to impersonate for the operation (a user or a service account)' },
  { name: 'as-group', type: 'string', multiple: true, description: 'Group to impersonate for the operation; repeat for several groups' },
  { name: 'request-timeout', type: 'string', description: 'How long to wait for each API request, as in 10s; 0 sets no limit of its own', default: '0' },
  { name: 'v', short: 'v', type: 'string', description: 'Log level: 6 and above show each failed API request and its status on stderr', default: '0' },
  { name: 'help', short: 'h', type: 'boolean', description: 'Print help for the command' },
];

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const options = Object.fromEntries(specs.map((spec) => [spec.name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }]));
  const { tokens } = tokenize({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags = new Map<string, string | boolean | string[]>();
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const spec = byName.get(token.name);
    if (!spec) {
      throw new CliError(token.rawName.startsWith('--') ? `unknown flag: ${token.rawName}` : `unknown shorthand flag: '${token.name}' in ${token.rawName}`);
    }
    let value = token.value;
    // pflag reads `-n=prod` as prod; node:util leaves the `=` in.
    if (value !== undefined && token.inlineValue && !token.rawName.startsWith('--') && value.startsWith('=')) value = value.slice(1);
    if (spec.type === 'boolean') {
      flags.set(spec.name, parseBoolean(spec.name, value));
      continue;
    }
    if (value === undefined) throw new CliError(`flag needs an argument: --${spec.name}`);
    if (spec.multiple) {
      const previous = flags.get(spec.name);
      flags.set(spec.name, [...(Array.isArray(previous) ? previous : []), value]);
    } else {
      flags.set(spec.name, value);
    }
  }
  return { positionals, flags };
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

/** Every value of a repeatable flag, in order. */
export function stringsFlag(args: ParsedArgs, name: string): string[] {
  const value = args.flags.get(name);
  if (Array.isArray(value)) return value;
  return typeof value === 'string' ? [value] : [];
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
  const lines = specs.filter((spec) => !spec.hidden).map((spec) => {
    const names = spec.short ? `-${spec.short}, --${spec.name}` : `    --${spec.name}`;
    const arg = spec.type === 'string' ? (spec.multiple ? ' stringArray' : ' string') : '';
    const def = spec.default !== undefined ? ` (default "${spec.default}")` : '';
    return [`  ${names}${arg}`, `${spec.description}${def}`] as const;
  });
  const width = Math.max(...lines.map(([left]) => left.length));
  return lines.map(([left, right]) => `${left.padEnd(width + 3)}${right}\n`).join('');
}
