/**
 * A reader of the YAML that kubeconfigs and cluster secrets are written in, so that the
 * function bundles need no YAML library (the `yaml` package was a sixth of each bundle).
 * It reads what `kubectl config view --raw`, `aws eks update-kubeconfig`, kind and
 * `JSON.stringify` write, and what people write by hand in the same style: one document;
 * block mappings and sequences (a sequence may sit at its key's indentation); plain
 * scalars (on several lines too, folded), single- and double-quoted scalars, literal and
 * folded block scalars; flow mappings and sequences, JSON included; comments. Plain
 * scalars resolve as in YAML 1.2's core schema (null, booleans, numbers), as the `yaml`
 * package resolves them by default. Anchors, aliases, tags, directives, complex keys and
 * several documents are refused with a YamlSubsetError, as is anything malformed.
 *
 * Messages name a line and what is wrong there, never the text: it holds credentials.
 */
import { InvalidInputError } from './errors';

/** Why a text was refused: `unsupported` for valid YAML this reader does not read, otherwise malformed. */
export class YamlSubsetError extends InvalidInputError {
  constructor(
    readonly line: number,
    reason: string,
    readonly unsupported = false,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'YamlSubsetError';
  }
}

/** Deeper nesting than any kubeconfig has is refused, so hostile text cannot exhaust the stack. */
const MAX_DEPTH = 64;

interface Line {
  /** Offset of the line's first character in the text. */
  readonly start: number;
  /** Offset of its line break (or the text's end). */
  readonly end: number;
  /** Leading spaces. */
  readonly indent: number;
  /** Only white space, or only a comment. */
  readonly blank: boolean;
}

/** A node read, and the index of the first line after it. */
interface Read {
  readonly value: unknown;
  readonly next: number;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};
const HEX_ESCAPES: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

const isBlankChar = (ch: string | undefined): boolean => ch === ' ' || ch === '\t';
/** A character that may follow `-`, `:` or `?` for it to be an indicator: white space or a line's end. */
const isSeparator = (ch: string | undefined): boolean => ch === undefined || ch === ' ' || ch === '\t' || ch === '\n';
const isFlowIndicator = (ch: string | undefined): boolean => ch === ',' || ch === '[' || ch === ']' || ch === '{' || ch === '}';

/** YAML 1.2 core schema, in the `yaml` package's order: null, booleans, integers (decimal, 0o, 0x), floats. */
function resolvePlain(text: string): unknown {
  if (/^(?:~|[Nn]ull|NULL)?$/.test(text)) return null;
  if (/^(?:[Tt]rue|TRUE)$/.test(text)) return true;
  if (/^(?:[Ff]alse|FALSE)$/.test(text)) return false;
  if (/^[-+]?[0-9]+$/.test(text)) return parseInt(text, 10);
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^[-+]?\.(?:inf|Inf|INF)$/.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^\.(?:nan|NaN|NAN)$/.test(text)) return NaN;
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(text)) return parseFloat(text);
  return text;
}

/** Sets a key as the `yaml` package does: an inherited name (`__proto__`, `toString`) becomes an own property. */
function setKey(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key in map) Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}

/** Line breaks folded: none is nothing, one a space, each further one a newline. */
function fold(breaks: number): string {
  return breaks === 0 ? '' : breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
}

/**
 * A block scalar's value from its lines ('' for empty ones): literal lines joined by
 * newlines; folded ones joined by spaces, except around blank and more-indented lines;
 * then the final line breaks that chomping `-` strips, the default clips to one, and `+` keeps.
 */
function joinBlockLines(lines: readonly string[], folding: boolean, chomp: string | undefined): string {
  let value = '';
  let empty = 0;
  let read = false;
  let moreIndented = false;
  for (const text of lines) {
    if (text === '') {
      empty += 1;
      continue;
    }
    if (!folding || isBlankChar(text[0])) {
      value += '\n'.repeat(read ? 1 + empty : empty);
      moreIndented = folding;
    } else if (moreIndented) {
      moreIndented = false;
      value += '\n'.repeat(empty + 1);
    } else value += empty === 0 ? (read ? ' ' : '') : '\n'.repeat(empty);
    value += text;
    read = true;
    empty = 0;
  }
  if (chomp === '+') return value + '\n'.repeat(read ? 1 + empty : empty);
  return chomp !== '-' && read ? `${value}\n` : value;
}

function keyString(key: unknown): string {
  return key === null ? '' : String(key);
}

class Reader {
  private readonly lines: Line[] = [];

  constructor(private readonly text: string) {
    let start = 0;
    for (const content of text.split('\n')) {
      const end = start + content.length;
      const indent = /^ */.exec(content)?.[0].length ?? 0;
      this.lines.push({ start, end, indent, blank: /^[ \t]*(?:#.*)?$/s.test(content) });
      start = end + 1;
    }
  }

  fail(offset: number, reason: string, unsupported = false): never {
    throw new YamlSubsetError(this.lineAt(offset) + 1, reason, unsupported);
  }

  unsupported(offset: number, what: string): never {
    this.fail(offset, `${what} are not supported; write it as \`kubectl config view --raw\` does, or as JSON`, true);
  }

  /** The index of the line holding `offset`. */
  private lineAt(offset: number): number {
    let low = 0;
    let high = this.lines.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lines[middle] as Line).start <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private line(index: number): Line {
    return this.lines[index] as Line;
  }

  /** The first line from `index` on that is neither blank nor only a comment. */
  private nextContent(index: number): number {
    let current = index;
    while (current < this.lines.length && this.line(current).blank) current += 1;
    return current;
  }

  private isMarker(index: number, marker: '---' | '...'): boolean {
    const { start } = this.line(index);
    return this.text.startsWith(marker, start) && isSeparator(this.text[start + 3]);
  }

  /** Where a line ends once trailing white space and a comment are dropped; fails on anything else after `from`. */
  private expectLineEnd(from: number): void {
    const end = this.line(this.lineAt(from)).end;
    const rest = this.text.slice(from, end);
    if (!/^(?:[ \t]+#.*|[ \t]*)$/s.test(rest)) this.fail(from, 'unexpected text after a value');
  }

  read(): unknown {
    let index = this.nextContent(0);
    let value: unknown = null;
    let body = true;
    if (index < this.lines.length) {
      const first = this.line(index);
      if (this.text[first.start] === '%') this.unsupported(first.start, 'directives');
      if (this.isMarker(index, '---')) {
        const content = this.skipInline(first.start + 3);
        body = content >= first.end || this.text[content] === '#';
        if (body) index = this.nextContent(index + 1);
        else ({ value, next: index } = this.inline(content, -1, 0));
      }
    }
    if (body && index < this.lines.length && !this.isTopMarker(index)) ({ value, next: index } = this.node(index, this.blockStart(index), -1, 0));
    index = this.nextContent(index);
    if (index < this.lines.length && this.isMarker(index, '...')) {
      this.expectLineEnd(this.line(index).start + 3);
      index = this.nextContent(index + 1);
    }
    if (index < this.lines.length) {
      if (this.isMarker(index, '---')) this.unsupported(this.line(index).start, 'several documents');
      this.fail(this.line(index).start, 'unexpected content (check the indentation)');
    }
    return value;
  }

  /** Where a block node starting a line begins; YAML indents with spaces only. */
  private blockStart(index: number): number {
    const { start, indent } = this.line(index);
    if (this.text[start + indent] === '\t') this.fail(start, 'a tab in indentation');
    return start + indent;
  }

  private skipInline(offset: number): number {
    let current = offset;
    while (isBlankChar(this.text[current])) current += 1;
    return current;
  }

  /** A node starting at `offset` (the first character of its line, or after `- `), its parent block indented `parent`. */
  private node(index: number, offset: number, parent: number, depth: number): Read {
    if (depth > MAX_DEPTH) this.fail(offset, 'nesting too deep');
    const ch = this.text[offset];
    const column = offset - this.line(index).start;
    if (ch === '-' && isSeparator(this.text[offset + 1])) return this.sequence(index, column, depth);
    if (ch === '?' && isSeparator(this.text[offset + 1])) this.unsupported(offset, 'complex keys');
    if (this.keyEnd(offset) !== undefined) return this.mapping(index, column, depth);
    return this.inline(offset, parent, depth);
  }

  /**
   * The offset just after the `:` of a `key:` starting at `offset`, or undefined when
   * the line does not start a mapping entry there.
   */
  private keyEnd(offset: number): number | undefined {
    const ch = this.text[offset];
    const end = this.line(this.lineAt(offset)).end;
    let colon: number;
    if (ch === '"' || ch === "'") {
      const close = this.quotedEndOnLine(offset, end);
      if (close === undefined) return undefined;
      colon = this.skipInline(close);
      if (this.text[colon] !== ':' || !isSeparator(this.text[colon + 1])) return undefined;
      return colon + 1;
    }
    if (ch === undefined || '[]{},#&*!|>%@`'.includes(ch) || ((ch === '-' || ch === '?') && isSeparator(this.text[offset + 1]))) return undefined;
    for (colon = offset; colon < end; colon += 1) {
      const current = this.text[colon];
      if (current === ':' && isSeparator(this.text[colon + 1])) return colon + 1;
      if (current === '#' && isBlankChar(this.text[colon - 1])) return undefined;
    }
    return undefined;
  }

  /** Where a quoted scalar opened at `offset` closes, if it does before `end`. */
  private quotedEndOnLine(offset: number, end: number): number | undefined {
    const quote = this.text[offset];
    for (let current = offset + 1; current < end; current += 1) {
      const ch = this.text[current];
      if (quote === '"' && ch === '\\') current += 1;
      else if (ch === quote) {
        if (quote === "'" && this.text[current + 1] === "'") current += 1;
        else return current + 1;
      }
    }
    return undefined;
  }

  private key(offset: number): { key: string; after: number } {
    const ch = this.text[offset];
    if (ch === '"' || ch === "'") {
      const { value, end } = this.quoted(offset, -1);
      return { key: value, after: this.skipInline(end) + 1 };
    }
    const after = this.keyEnd(offset) as number;
    const text = this.text.slice(offset, after - 1).replace(/[ \t]+$/, '');
    return { key: keyString(resolvePlain(text)), after };
  }

  private mapping(first: number, column: number, depth: number): Read {
    const map: Record<string, unknown> = {};
    const seen = new Set<string>();
    let index = first;
    let offset = this.line(first).start + column;
    for (;;) {
      if (this.keyEnd(offset) === undefined) this.fail(offset, 'expected a "key: value" entry');
      const { key, after } = this.key(offset);
      if (seen.has(key)) this.fail(offset, 'a key appears twice in one mapping');
      seen.add(key);
      const valueAt = this.skipInline(after);
      let read: Read;
      if (valueAt >= this.line(index).end || this.text[valueAt] === '#') {
        const next = this.nextContent(index + 1);
        const below = next < this.lines.length ? this.line(next) : undefined;
        if (below && below.indent > column) read = this.node(next, this.blockStart(next), column, depth + 1);
        else if (below && below.indent === column && this.text[below.start + column] === '-' && isSeparator(this.text[below.start + column + 1]))
          read = this.sequence(next, column, depth + 1);
        else read = { value: null, next: index + 1 };
      } else {
        read = this.inline(valueAt, column, depth + 1);
      }
      setKey(map, key, read.value);
      index = this.nextContent(read.next);
      if (index >= this.lines.length || this.isTopMarker(index)) return { value: map, next: index };
      const line = this.line(index);
      if (line.indent < column) return { value: map, next: index };
      if (line.indent > column) this.fail(line.start, 'unexpected indentation');
      offset = this.blockStart(index);
    }
  }

  private sequence(first: number, column: number, depth: number): Read {
    const list: unknown[] = [];
    let index = first;
    for (;;) {
      const line = this.line(index);
      const itemAt = this.skipInline(line.start + column + 1);
      let read: Read;
      if (itemAt >= line.end || this.text[itemAt] === '#') {
        const next = this.nextContent(index + 1);
        const below = next < this.lines.length ? this.line(next) : undefined;
        read = below && below.indent > column ? this.node(next, this.blockStart(next), column, depth + 1) : { value: null, next: index + 1 };
      } else {
        if (this.text.slice(line.start + column + 1, itemAt).includes('\t')) this.unsupported(itemAt, 'tabs after "-"');
        read = this.node(index, itemAt, column, depth + 1);
      }
      list.push(read.value);
      index = this.nextContent(read.next);
      if (index >= this.lines.length || this.isTopMarker(index)) return { value: list, next: index };
      const next = this.line(index);
      if (next.indent < column) return { value: list, next: index };
      if (next.indent > column) this.fail(next.start, 'unexpected indentation');
      if (this.text[this.blockStart(index)] !== '-' || !isSeparator(this.text[next.start + column + 1])) return { value: list, next: index };
    }
  }

  private isTopMarker(index: number): boolean {
    return this.isMarker(index, '---') || this.isMarker(index, '...');
  }

  /** A scalar or flow collection starting at `offset`, continuing on lines indented more than `parent`. */
  private inline(offset: number, parent: number, depth: number): Read {
    const ch = this.text[offset] as string;
    if (ch === '&' || ch === '*' || ch === '!') this.unsupported(offset, 'anchors, aliases and tags');
    if (ch === '|' || ch === '>') return this.blockScalar(offset, parent);
    if (ch === '"' || ch === "'") {
      const { value, end } = this.quoted(offset, parent);
      this.expectLineEnd(end);
      return { value, next: this.lineAt(end) + 1 };
    }
    if (ch === '{' || ch === '[') {
      const { value, end } = this.flow(offset, parent, depth);
      const rest = this.skipInline(end);
      if (this.text[rest] === ':' && isSeparator(this.text[rest + 1])) this.unsupported(offset, 'complex keys');
      this.expectLineEnd(end);
      return { value, next: this.lineAt(end) + 1 };
    }
    if (ch === '-' && isSeparator(this.text[offset + 1])) this.fail(offset, 'a sequence cannot start on the line of its key');
    if (ch === '?' && isSeparator(this.text[offset + 1])) this.unsupported(offset, 'complex keys');
    if ('],}#%@`'.includes(ch)) this.fail(offset, 'a plain scalar cannot start with this character');
    return this.plain(offset, parent);
  }

  /** A plain scalar: the rest of the line, then folded continuation lines indented more than `parent`. */
  private plain(offset: number, parent: number): Read {
    let index = this.lineAt(offset);
    let from = offset;
    let folded = '';
    let breaks = -1;
    for (;;) {
      const line = this.line(index);
      const comment = this.text.slice(from, line.end).search(/[ \t]#/);
      const stop = comment === -1 ? line.end : from + comment;
      const part = this.text.slice(from, stop).replace(/[ \t]+$/, '');
      if (/:(?:[ \t]|$)/.test(part)) this.fail(from, breaks < 0 ? 'a mapping cannot start on the line of a key' : 'a key must be on one line');
      folded += breaks < 0 ? part : fold(breaks + 1) + part;
      index += 1;
      if (comment !== -1) break;
      // The continuation: blank lines fold to line breaks; a comment or a shallower line ends the scalar.
      breaks = 0;
      // A blank line led by a tab where the indentation should be is refused if the scalar goes on past it.
      let tabbed: number | undefined;
      while (index < this.lines.length && /^[ \t]*$/.test(this.text.slice(this.line(index).start, this.line(index).end))) {
        const { start, indent } = this.line(index);
        if (indent <= parent && this.text[start + indent] === '\t') tabbed ??= start;
        breaks += 1;
        index += 1;
      }
      if (index >= this.lines.length) break;
      const next = this.line(index);
      if (next.indent <= parent || next.blank || this.isTopMarker(index)) break;
      if (tabbed !== undefined) this.fail(tabbed, 'a tab in indentation');
      from = this.skipInline(next.start + next.indent);
    }
    return { value: resolvePlain(folded), next: index };
  }

  /** Counts a quoted scalar's line breaks from `offset` on (blank lines included) and skips the white space around them. */
  private lineBreaks(offset: number, parent: number): { breaks: number; next: number } {
    let current = offset;
    let breaks = 0;
    while (this.text[current] === '\n') {
      breaks += 1;
      current += 1;
      const index = this.lineAt(current);
      const { start, indent } = this.line(index);
      while (isBlankChar(this.text[current])) current += 1;
      const blank = current >= this.text.length || this.text[current] === '\n';
      if (indent <= parent && this.text[start + indent] === '\t') this.fail(start, 'a tab in indentation');
      if (!blank && (indent <= parent || this.isTopMarker(index))) this.fail(start, 'a quoted scalar continues on a line not indented under its key');
    }
    return { breaks, next: current };
  }

  /** A single- or double-quoted scalar, possibly on several lines; `end` is just past its closing quote. */
  private quoted(offset: number, parent: number): { value: string; end: number } {
    const quote = this.text[offset];
    let value = '';
    // Escaped white space at the end of a line is kept; other trailing white space folds away.
    let kept = 0;
    let current = offset + 1;
    for (;;) {
      const ch = this.text[current];
      if (ch === undefined) this.fail(offset, 'a quoted scalar is not closed');
      if (ch === quote) {
        if (quote === "'" && this.text[current + 1] === "'") {
          value += "'";
          current += 2;
          continue;
        }
        return { value, end: current + 1 };
      }
      if (ch === '\n') {
        value = value.slice(0, kept) + value.slice(kept).replace(/[ \t]+$/, '');
        const { breaks, next } = this.lineBreaks(current, parent);
        value += fold(breaks);
        current = next;
        kept = value.length;
        continue;
      }
      if (quote === '"' && ch === '\\') {
        const escape = this.text[current + 1] as string;
        if (escape === '\n') {
          // The escaped break is dropped and the rest fold (the yaml package's reading; the
          // spec would turn each blank line after it into a newline).
          const { breaks, next } = this.lineBreaks(current + 1, parent);
          value += fold(breaks - 1);
          current = next;
        } else if (escape in HEX_ESCAPES) {
          const digits = this.text.slice(current + 2, current + 2 + (HEX_ESCAPES[escape] as number));
          const code = parseInt(digits, 16);
          if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== HEX_ESCAPES[escape] || code > 0x10ffff) this.fail(current, 'an invalid escape');
          value += String.fromCodePoint(code);
          current += 2 + digits.length;
        } else {
          const replacement = ESCAPES[escape];
          if (replacement === undefined) this.fail(current, 'an invalid escape');
          value += replacement;
          current += 2;
        }
        kept = value.length;
        continue;
      }
      value += ch;
      current += 1;
    }
  }

  /** A literal (`|`) or folded (`>`) block scalar with its chomping (`-`, `+`) and indentation indicators. */
  private blockScalar(offset: number, parent: number): Read {
    const header = /^([|>])(?:([1-9])([-+])?|([-+])([1-9])?)?/.exec(this.text.slice(offset, offset + 3)) as RegExpExecArray;
    const explicit = header[2] ?? header[5];
    this.expectLineEnd(offset + header[0].length);
    const { lines, next } = this.blockLines(this.lineAt(offset) + 1, parent, explicit === undefined ? undefined : Math.max(parent, 0) + Number(explicit));
    return { value: joinBlockLines(lines, header[1] === '>', header[3] ?? header[4]), next };
  }

  /**
   * A block scalar's lines from line `first` on, without their indentation (`indent`, or
   * the first text line's): '' for an empty line. Ends at a line indented less, or at
   * `parent` or less before any text.
   */
  private blockLines(first: number, parent: number, explicit: number | undefined): { lines: string[]; next: number } {
    const lines: string[] = [];
    let indent = explicit;
    let leading = 0;
    let index = first;
    for (; index < this.lines.length; index += 1) {
      const line = this.line(index);
      const content = this.text.slice(line.start, line.end);
      // A tab where the text's indentation should be is refused, as the yaml package does.
      if (this.text[line.start + line.indent] === '\t' && (indent === undefined ? line.indent <= parent : line.indent < indent)) this.fail(line.start, 'a tab in indentation');
      const spaces = /^ *$/.test(content);
      if (indent === undefined && !spaces) {
        if (line.indent > parent && leading > line.indent) this.fail(line.start, 'a block scalar starts with blank lines indented more than its text');
        indent = line.indent;
      }
      if (indent === undefined || (spaces && content.length <= indent)) {
        leading = Math.max(leading, content.length);
        lines.push('');
      } else if (indent <= parent || line.indent < indent || this.isTopMarker(index)) break;
      else lines.push(content.slice(indent));
    }
    return { lines, next: index };
  }

  /** Skips white space, line breaks and comments inside a flow collection, checking each new line's indentation. */
  private flowSpace(offset: number, parent: number): number {
    let current = offset;
    for (;;) {
      const ch = this.text[current];
      if (isBlankChar(ch)) current += 1;
      else if (ch === '#' && (current === 0 || /[ \t\n]/.test(this.text[current - 1] as string))) current = this.line(this.lineAt(current)).end;
      else if (ch === '\n') {
        current += 1;
        const index = this.lineAt(current);
        const { blank, indent, start } = this.line(index);
        // Only the closing bracket may sit at its key's indentation.
        const closing = indent === parent && ']}'.includes(this.text[start + indent] as string);
        if (!blank && ((indent <= parent && !closing) || this.isTopMarker(index))) this.fail(current, 'a flow collection continues on a line not indented under its key');
      } else return current;
    }
  }

  private flow(offset: number, parent: number, depth: number): { value: unknown; end: number } {
    if (depth > MAX_DEPTH) this.fail(offset, 'nesting too deep');
    const isMap = this.text[offset] === '{';
    const close = isMap ? '}' : ']';
    const map: Record<string, unknown> = {};
    const seen = new Set<string>();
    const list: unknown[] = [];
    let current = this.flowSpace(offset + 1, parent);
    while (this.text[current] !== close) {
      if (current >= this.text.length) this.fail(offset, 'a flow collection is not closed');
      const entry = this.flowNode(current, parent, depth + 1, isMap);
      current = this.flowSpace(entry.end, parent);
      if (isMap) {
        const key = keyString(entry.value);
        if (typeof entry.value === 'object' && entry.value !== null) this.unsupported(entry.end, 'complex keys');
        if (seen.has(key)) this.fail(current, 'a key appears twice in one mapping');
        seen.add(key);
        let value: unknown = null;
        if (this.text[current] === ':') {
          current = this.flowSpace(current + 1, parent);
          if (this.text[current] !== ',' && this.text[current] !== '}') {
            const read = this.flowNode(current, parent, depth + 1, false);
            value = read.value;
            current = this.flowSpace(read.end, parent);
          }
        }
        setKey(map, key, value);
      } else {
        if (this.text[current] === ':') this.unsupported(current, 'mappings inside flow sequences');
        list.push(entry.value);
      }
      if (this.text[current] === ',') current = this.flowSpace(current + 1, parent);
      else if (this.text[current] !== close) this.fail(current, `expected "," or "${close}"`);
    }
    return { value: isMap ? map : list, end: current + 1 };
  }

  private flowNode(offset: number, parent: number, depth: number, isKey: boolean): { value: unknown; end: number } {
    const ch = this.text[offset] as string;
    if (ch === '{' || ch === '[') return this.flow(offset, parent, depth);
    if (ch === '"' || ch === "'") return this.quoted(offset, parent);
    if (ch === '&' || ch === '*' || ch === '!') this.unsupported(offset, 'anchors, aliases and tags');
    if (ch === '-' && isFlowIndicator(this.text[offset + 1])) this.fail(offset, 'expected a value');
    if ((ch === '?' || ch === '-') && isSeparator(this.text[offset + 1])) this.unsupported(offset, isKey ? 'complex keys' : 'block entries inside flow collections');
    if (',]}#|>%@`'.includes(ch)) this.fail(offset, 'expected a value');
    return this.flowPlain(offset, parent);
  }

  /** A plain scalar inside a flow collection, folded when it goes on over several lines. */
  private flowPlain(offset: number, parent: number): { value: unknown; end: number } {
    let text = '';
    let end = offset;
    let lines = 1;
    for (;;) {
      let stop = end;
      for (; stop < this.text.length; stop += 1) {
        const current = this.text[stop];
        if (current === '\n' || isFlowIndicator(current)) break;
        if (current === ':' && (isSeparator(this.text[stop + 1]) || isFlowIndicator(this.text[stop + 1]))) break;
        if (current === '#' && isBlankChar(this.text[stop - 1])) break;
      }
      text += this.text.slice(end, stop).replace(/[ \t]+$/, '');
      end = stop;
      if (this.text[stop] !== '\n') break;
      // A line break folds into the scalar unless what follows ends it.
      const next = this.flowSpace(stop, parent);
      const gap = this.text.slice(stop, next);
      const following = this.text[next];
      if (next >= this.text.length || gap.includes('#') || isFlowIndicator(following) || following === ':') break;
      const breaks = gap.split('\n').length - 1;
      text += fold(breaks);
      lines += 1;
      end = next;
    }
    if (lines > 1 && this.text[this.flowSpace(end, parent)] === ':') this.fail(offset, 'a key must be on one line');
    return { value: resolvePlain(text), end };
  }
}

/**
 * Reads one YAML document of the subset described above into plain values, as the `yaml`
 * package's `parse` does; an empty document is null. Throws YamlSubsetError.
 */
export function parseYamlSubset(text: string): unknown {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  return new Reader(normalized).read();
}
