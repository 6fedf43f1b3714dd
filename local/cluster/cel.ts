/**
 * A small evaluator for the subset of CEL that the admission policies of `infra/k8s/` and
 * the CRDs' `x-kubernetes-validations` use — not a CEL implementation. It covers: literals
 * (strings, integers, booleans, null, lists), the variables `object`, `oldObject`,
 * `request`, `namespaceObject`, a policy's `variables` and (for CRD rules) `self`, field
 * selection, indexing, `!`, `&&`, `||` (with CEL's absorption of errors), `+` and `-` on
 * integers, `+` on strings, `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `?:`, the macros
 * `has()`, `exists()`, `all()`, the function `size()` and the string methods `startsWith`,
 * `endsWith`, `contains` and `matches` (a regular expression that means the same in RE2,
 * which CEL uses, and in JavaScript: no lookaround, no backreference).
 * Anything else is refused when the expression is compiled (CelUnsupportedError), so a
 * policy the server cannot evaluate faithfully fails loudly instead of passing silently.
 */

/** An expression uses CEL this evaluator does not implement (or is not CEL). */
export class CelUnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelUnsupportedError';
  }
}

/** Evaluation failed (no such key, a type mismatch), as a CEL runtime error. */
export class CelEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelEvaluationError';
  }
}

export const CEL_VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject', 'variables', 'self'] as const;
const METHODS = new Set(['startsWith', 'endsWith', 'contains', 'matches', 'size']);
/** What JavaScript's regular expressions accept and RE2 refuses (or reads otherwise). */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k<|\(\?<[A-Za-z]/;
const MACROS = new Set(['exists', 'all']);

type Node =
  | { type: 'literal'; value: unknown }
  | { type: 'ident'; name: string }
  | { type: 'list'; items: Node[] }
  | { type: 'select'; operand: Node; field: string }
  | { type: 'index'; operand: Node; index: Node }
  | { type: 'has'; operand: Node; field: string }
  | { type: 'macro'; name: string; operand: Node; variable: string; body: Node }
  | { type: 'call'; name: string; target?: Node; args: Node[] }
  | { type: 'unary'; op: '!' | '-'; operand: Node }
  | { type: 'binary'; op: string; left: Node; right: Node }
  | { type: 'conditional'; test: Node; then: Node; otherwise: Node };

interface Token {
  kind: 'ident' | 'string' | 'number' | 'op' | 'end';
  text: string;
  value?: unknown;
}

const OPERATORS = ['&&', '||', '==', '!=', '<=', '>=', '<', '>', '!', '?', ':', '.', ',', '(', ')', '[', ']', '-', '+'];

/** A quoted string starting at `start`: its text and the index after its closing quote. */
function readString(source: string, start: number): { text: string; end: number } {
  const quote = source[start];
  let text = '';
  let j = start + 1;
  while (j < source.length && source[j] !== quote) {
    const c = source[j] ?? '';
    if (c !== '\\') {
      text += c;
      j += 1;
      continue;
    }
    const next = source[j + 1] ?? '';
    if (!['\\', "'", '"'].includes(next)) throw new CelUnsupportedError(`escape \\${next} is not supported`);
    text += next;
    j += 2;
  }
  if (j >= source.length) throw new CelUnsupportedError('unterminated string');
  return { text, end: j + 1 };
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] ?? '';
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c === "'" || c === '"') {
      const { text, end } = readString(source, i);
      tokens.push({ kind: 'string', text, value: text });
      i = end;
      continue;
    }
    const number = /^\d+/.exec(source.slice(i));
    if (number) {
      tokens.push({ kind: 'number', text: number[0], value: Number(number[0]) });
      i += number[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0] });
      i += ident[0].length;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i));
    if (!op) throw new CelUnsupportedError(`unexpected character ${JSON.stringify(c)}`);
    tokens.push({ kind: 'op', text: op });
    i += op.length;
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.position] ?? { kind: 'end', text: '' };
  }

  private next(): Token {
    const token = this.peek();
    this.position += 1;
    return token;
  }

  private accept(text: string): boolean {
    const token = this.peek();
    if ((token.kind === 'op' || token.kind === 'ident') && token.text === text) {
      this.position += 1;
      return true;
    }
    return false;
  }

  private expect(text: string): void {
    if (!this.accept(text)) throw new CelUnsupportedError(`expected ${JSON.stringify(text)} but found ${JSON.stringify(this.peek().text) || 'the end'}`);
  }

  parseAll(): Node {
    const node = this.conditional();
    if (this.peek().kind !== 'end') throw new CelUnsupportedError(`unexpected ${JSON.stringify(this.peek().text)}`);
    return node;
  }

  private conditional(): Node {
    const test = this.or();
    if (!this.accept('?')) return test;
    const then = this.conditional();
    this.expect(':');
    return { type: 'conditional', test, then, otherwise: this.conditional() };
  }

  private or(): Node {
    let left = this.and();
    while (this.accept('||')) left = { type: 'binary', op: '||', left, right: this.and() };
    return left;
  }

  private and(): Node {
    let left = this.relation();
    while (this.accept('&&')) left = { type: 'binary', op: '&&', left, right: this.relation() };
    return left;
  }

  private relation(): Node {
    const left = this.additive();
    for (const op of ['==', '!=', '<=', '>=', '<', '>', 'in']) {
      if (this.accept(op)) return { type: 'binary', op, left, right: this.additive() };
    }
    return left;
  }

  private additive(): Node {
    let left = this.unary();
    for (;;) {
      if (this.accept('+')) left = { type: 'binary', op: '+', left, right: this.unary() };
      else if (this.accept('-')) left = { type: 'binary', op: '-', left, right: this.unary() };
      else return left;
    }
  }

  private unary(): Node {
    if (this.accept('!')) return { type: 'unary', op: '!', operand: this.unary() };
    if (this.accept('-')) return { type: 'unary', op: '-', operand: this.unary() };
    return this.member();
  }

  private arguments(): Node[] {
    const args: Node[] = [];
    if (this.accept(')')) return args;
    do args.push(this.conditional());
    while (this.accept(','));
    this.expect(')');
    return args;
  }

  private member(): Node {
    let node = this.primary();
    for (;;) {
      if (this.accept('.')) {
        const name = this.next();
        if (name.kind !== 'ident') throw new CelUnsupportedError('expected a field name after "."');
        if (!this.accept('(')) {
          node = { type: 'select', operand: node, field: name.text };
          continue;
        }
        if (MACROS.has(name.text)) {
          const variable = this.next();
          if (variable.kind !== 'ident') throw new CelUnsupportedError(`${name.text}() needs a variable name first`);
          this.expect(',');
          const body = this.conditional();
          this.expect(')');
          node = { type: 'macro', name: name.text, operand: node, variable: variable.text, body };
          continue;
        }
        if (!METHODS.has(name.text)) throw new CelUnsupportedError(`function ${name.text}() is not supported`);
        node = { type: 'call', name: name.text, target: node, args: this.arguments() };
        if (name.text === 'matches') checkPattern(node.args);
      } else if (this.accept('[')) {
        const index = this.conditional();
        this.expect(']');
        node = { type: 'index', operand: node, index };
      } else {
        return node;
      }
    }
  }

  private primary(): Node {
    const token = this.next();
    if (token.kind === 'string' || token.kind === 'number') return { type: 'literal', value: token.value };
    if (token.kind === 'op' && token.text === '(') {
      const node = this.conditional();
      this.expect(')');
      return node;
    }
    if (token.kind === 'op' && token.text === '[') {
      const items: Node[] = [];
      if (!this.accept(']')) {
        do items.push(this.conditional());
        while (this.accept(','));
        this.expect(']');
      }
      return { type: 'list', items };
    }
    if (token.kind !== 'ident') throw new CelUnsupportedError(`unexpected ${JSON.stringify(token.text) || 'end of expression'}`);
    if (token.text === 'true' || token.text === 'false') return { type: 'literal', value: token.text === 'true' };
    if (token.text === 'null') return { type: 'literal', value: null };
    if (this.accept('(')) {
      if (token.text === 'has') {
        const operand = this.member();
        this.expect(')');
        if (operand.type !== 'select') throw new CelUnsupportedError('has() needs a field selection, e.g. has(object.metadata.labels)');
        return { type: 'has', operand: operand.operand, field: operand.field };
      }
      if (token.text === 'size') return { type: 'call', name: 'size', args: this.arguments() };
      throw new CelUnsupportedError(`function ${token.text}() is not supported`);
    }
    return { type: 'ident', name: token.text };
  }
}

/** A literal pattern must mean the same to RE2 as to JavaScript; a computed one is checked when evaluated. */
function checkPattern(args: Node[]): void {
  const [pattern] = args;
  if (args.length !== 1 || pattern === undefined) throw new CelUnsupportedError('matches() takes one argument');
  if (pattern.type === 'literal' && typeof pattern.value === 'string') compilePattern(pattern.value, CelUnsupportedError);
}

function compilePattern(pattern: string, failure: new (message: string) => Error): RegExp {
  if (NOT_RE2.test(pattern)) throw new failure(`matches(): ${JSON.stringify(pattern)} uses lookaround or a backreference, which RE2 does not support`);
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    throw new failure(`matches(): ${error instanceof Error ? error.message : String(error)}`);
  }
}

function checkIdentifiers(node: Node, bound: Set<string>): void {
  switch (node.type) {
    case 'ident':
      if (!bound.has(node.name) && !(CEL_VARIABLES as readonly string[]).includes(node.name)) {
        throw new CelUnsupportedError(`undeclared reference to '${node.name}'`);
      }
      return;
    case 'literal':
      return;
    case 'list':
      node.items.forEach((item) => checkIdentifiers(item, bound));
      return;
    case 'select':
    case 'has':
      checkIdentifiers(node.operand, bound);
      return;
    case 'index':
      checkIdentifiers(node.operand, bound);
      checkIdentifiers(node.index, bound);
      return;
    case 'macro':
      checkIdentifiers(node.operand, bound);
      checkIdentifiers(node.body, new Set([...bound, node.variable]));
      return;
    case 'call':
      if (node.target) checkIdentifiers(node.target, bound);
      node.args.forEach((arg) => checkIdentifiers(arg, bound));
      return;
    case 'unary':
      checkIdentifiers(node.operand, bound);
      return;
    case 'binary':
      checkIdentifiers(node.left, bound);
      checkIdentifiers(node.right, bound);
      return;
    case 'conditional':
      checkIdentifiers(node.test, bound);
      checkIdentifiers(node.then, bound);
      checkIdentifiers(node.otherwise, bound);
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (isMap(value)) return 'map';
  return typeof value === 'number' ? 'int' : typeof value === 'boolean' ? 'bool' : typeof value;
}

function equal(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key]));
  }
  return a === b;
}

function bool(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw new CelEvaluationError(`no such overload: ${what} applied to ${typeName(value)}`);
  return value;
}

function string(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new CelEvaluationError(`no such overload: ${what} on ${typeName(value)}`);
  return value;
}

function elements(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isMap(value)) return Object.keys(value);
  throw new CelEvaluationError(`no such overload: ${what} on ${typeName(value)}`);
}

type Scope = Record<string, unknown>;

function select(operand: unknown, field: string): unknown {
  if (!isMap(operand)) throw new CelEvaluationError(`no such key: ${field} (on ${typeName(operand)})`);
  // Own keys only: `constructor` or `toString` are not fields of a JSON object.
  if (!Object.hasOwn(operand, field) || operand[field] === undefined) throw new CelEvaluationError(`no such key: ${field}`);
  return operand[field];
}

function index(operand: unknown, key: unknown): unknown {
  if (Array.isArray(operand) && typeof key === 'number') {
    if (key < 0 || key >= operand.length) throw new CelEvaluationError(`index out of range: ${key}`);
    return operand[key];
  }
  if (isMap(operand) && typeof key === 'string') return select(operand, key);
  throw new CelEvaluationError(`no such overload: index of ${typeName(operand)} by ${typeName(key)}`);
}

function evaluate(node: Node, scope: Scope): unknown {
  switch (node.type) {
    case 'literal':
      return node.value;
    case 'ident':
      if (!(node.name in scope)) throw new CelEvaluationError(`undeclared reference to '${node.name}'`);
      return scope[node.name];
    case 'list':
      return node.items.map((item) => evaluate(item, scope));
    case 'select':
      return select(evaluate(node.operand, scope), node.field);
    case 'has': {
      const operand = evaluate(node.operand, scope);
      if (!isMap(operand)) throw new CelEvaluationError(`has() on ${typeName(operand)}`);
      return Object.hasOwn(operand, node.field) && operand[node.field] !== undefined && operand[node.field] !== null;
    }
    case 'index':
      return index(evaluate(node.operand, scope), evaluate(node.index, scope));
    case 'macro':
      return evaluateMacro(node, scope);
    case 'call':
      return evaluateCall(node, scope);
    case 'unary': {
      const operand = evaluate(node.operand, scope);
      if (node.op === '!') return !bool(operand, '!');
      if (typeof operand !== 'number') throw new CelEvaluationError(`no such overload: - on ${typeName(operand)}`);
      return -operand;
    }
    case 'binary':
      return evaluateBinary(node.op, node.left, node.right, scope);
    case 'conditional':
      return bool(evaluate(node.test, scope), '?:') ? evaluate(node.then, scope) : evaluate(node.otherwise, scope);
  }
}

function evaluateMacro(node: Extract<Node, { type: 'macro' }>, scope: Scope): boolean {
  const items = elements(evaluate(node.operand, scope), `${node.name}()`);
  let failure: unknown;
  for (const item of items) {
    let result: boolean;
    try {
      result = bool(evaluate(node.body, { ...scope, [node.variable]: item }), node.name);
    } catch (error) {
      failure ??= error;
      continue;
    }
    if (node.name === 'exists' && result) return true;
    if (node.name === 'all' && !result) return false;
  }
  if (failure !== undefined) throw failure;
  return node.name === 'all';
}

function evaluateCall(node: Extract<Node, { type: 'call' }>, scope: Scope): unknown {
  const target = node.target === undefined ? undefined : evaluate(node.target, scope);
  const args = node.args.map((arg) => evaluate(arg, scope));
  if (node.name === 'size') {
    const value = node.target === undefined ? args[0] : target;
    if (typeof value === 'string') return [...value].length;
    return elements(value, 'size()').length;
  }
  const text = string(target, `${node.name}()`);
  const argument = string(args[0], `${node.name}()`);
  // CEL's matches() finds the pattern anywhere in the string, as RE2's MatchString does.
  if (node.name === 'matches') return compilePattern(argument, CelEvaluationError).test(text);
  if (node.name === 'startsWith') return text.startsWith(argument);
  if (node.name === 'endsWith') return text.endsWith(argument);
  return text.includes(argument);
}

/** `+` on two integers or two strings (concatenation), `-` on two integers. */
function arithmetic(op: '+' | '-', left: unknown, right: unknown): unknown {
  if (op === '+' && typeof left === 'string' && typeof right === 'string') return left + right;
  if (typeof left !== 'number' || typeof right !== 'number') throw new CelEvaluationError(`no such overload: ${typeName(left)} ${op} ${typeName(right)}`);
  return op === '+' ? left + right : left - right;
}

function evaluateBinary(op: string, leftNode: Node, rightNode: Node, scope: Scope): unknown {
  if (op === '&&' || op === '||') {
    // CEL's logical operators are commutative over errors: a decisive side wins.
    const decisive = op === '||';
    let leftError: unknown;
    try {
      if (bool(evaluate(leftNode, scope), op) === decisive) return decisive;
    } catch (error) {
      leftError = error;
    }
    const right = bool(evaluate(rightNode, scope), op);
    if (right === decisive) return decisive;
    if (leftError !== undefined) throw leftError;
    return !decisive;
  }
  const left = evaluate(leftNode, scope);
  const right = evaluate(rightNode, scope);
  switch (op) {
    case '+':
    case '-':
      return arithmetic(op, left, right);
    case '==':
      return equal(left, right);
    case '!=':
      return !equal(left, right);
    case 'in':
      if (Array.isArray(right)) return right.some((item) => equal(item, left));
      if (isMap(right)) return typeof left === 'string' && Object.hasOwn(right, left);
      throw new CelEvaluationError(`no such overload: in ${typeName(right)}`);
    default: {
      if (typeof left !== typeof right || (typeof left !== 'number' && typeof left !== 'string')) {
        throw new CelEvaluationError(`no such overload: ${typeName(left)} ${op} ${typeName(right)}`);
      }
      const a = left as number | string;
      const b = right as number | string;
      return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
    }
  }
}

/** A compiled expression: evaluate it against the admission variables. */
export interface CelProgram {
  readonly source: string;
  evaluate(variables: Scope): unknown;
}

const compiled = new Map<string, CelProgram>();

/** Parses and checks an expression; throws CelUnsupportedError for anything outside the subset. */
export function compileCel(source: string): CelProgram {
  const cached = compiled.get(source);
  if (cached) return cached;
  const ast = new Parser(tokenize(source)).parseAll();
  checkIdentifiers(ast, new Set());
  const program: CelProgram = { source, evaluate: (variables) => evaluate(ast, variables) };
  compiled.set(source, program);
  return program;
}
