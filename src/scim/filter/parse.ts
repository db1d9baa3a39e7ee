/**
 * Parses the filter grammar of RFC 7644 section 3.4.2.2 and the PATCH path grammar of section
 * 3.5.2 into the frozen trees of ast.ts. Precedence: `not` binds tighter than `and`, which binds
 * tighter than `or`; operators and keywords are case-insensitive. String literals take double
 * quotes (JSON escapes) or the contract's single quotes. Attribute names are kept as written:
 * bind.ts checks them against the schema. Input length and nesting are bounded, so a hostile
 * filter is refused before it costs anything.
 */
import { unquotedFilterValue } from '../compat.ts';
import { badRequest } from '../errors.ts';
import type { ScimError, ScimType } from '../errors.ts';
import { parseAttrPath } from '../path.ts';
import { isStorableText } from '../../text.ts';
import type { AttrPath, CompareOp, Filter, Literal, PatchPath } from './ast.ts';

export const MAX_FILTER_LENGTH = 4096;
export const MAX_FILTER_DEPTH = 24;
export const MAX_FILTER_TERMS = 200;

type Token =
  | { readonly t: '(' | ')' | '[' | ']'; readonly at: number }
  | { readonly t: 'string'; readonly value: string; readonly at: number }
  | { readonly t: 'word'; readonly text: string; readonly at: number };

const COMPARE_OPS: readonly CompareOp[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
const KEYWORDS = new Set(['and', 'or', 'not']);

function tokenize(text: string, fail: (why: string) => ScimError): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    // Words end at any \s, so any \s must be skipped here: a space only one of the two rules
    // knew (no-break space, vertical tab) would make an empty word and never advance.
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ t: c, at: i });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw fail(`unterminated string starting at ${i + 1}`);
      let value: unknown;
      try {
        value = JSON.parse(text.slice(i, j + 1));
      } catch {
        throw fail(`invalid escape in the string starting at ${i + 1}`);
      }
      // The URL check saw the escape, not what it decodes to: "\u0000" or a lone "\ud800"
      // would reach the database, which PostgreSQL refuses (a 500).
      if (!isStorableText(value as string)) throw fail(`the string starting at ${i + 1} holds a NUL or a lone surrogate`);
      tokens.push({ t: 'string', value: value as string, at: i });
      i = j + 1;
    } else if (c === "'") {
      // The contract's form: userName eq '<x>'. A backslash escapes the next character.
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== "'") {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        value += text[j];
        j++;
      }
      if (j >= text.length) throw fail(`unterminated string starting at ${i + 1}`);
      tokens.push({ t: 'string', value, at: i });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s()[\]"']/.test(text[j]!)) j++;
      tokens.push({ t: 'word', text: text.slice(i, j), at: i });
      i = j;
    }
  }
  return tokens;
}

class Parser {
  readonly #tokens: Token[];
  readonly #fail: (why: string) => ScimError;
  readonly #scimType: ScimType;
  #pos = 0;
  #depth = 0;
  #terms = 0;

  constructor(tokens: Token[], fail: (why: string) => ScimError, scimType: ScimType) {
    this.#tokens = tokens;
    this.#fail = fail;
    this.#scimType = scimType;
  }

  get done(): boolean {
    return this.#pos >= this.#tokens.length;
  }

  peek(): Token | undefined {
    return this.#tokens[this.#pos];
  }

  next(): Token | undefined {
    return this.#tokens[this.#pos++];
  }

  fail(why: string): ScimError {
    return this.#fail(why);
  }

  expect(t: '(' | ')' | '[' | ']'): void {
    const token = this.next();
    if (token?.t !== t) throw this.fail(`expected "${t}" ${token ? `at ${token.at + 1}` : 'at the end'}`);
  }

  isKeyword(token: Token | undefined, keyword: string): boolean {
    return token?.t === 'word' && token.text.toLowerCase() === keyword;
  }

  /** orExpr := andExpr ("or" andExpr)* */
  or(inValuePath: boolean): Filter {
    let left = this.and(inValuePath);
    while (this.isKeyword(this.peek(), 'or')) {
      this.next();
      left = Object.freeze({ kind: 'or' as const, left, right: this.and(inValuePath) });
    }
    return left;
  }

  /** `open` orExpr `close`: one level of nesting (a group or a value filter). */
  nested(inValuePath: boolean, close: ')' | ']'): Filter {
    if (++this.#depth > MAX_FILTER_DEPTH) throw this.fail(`nested deeper than ${MAX_FILTER_DEPTH} levels`);
    const inner = this.or(inValuePath);
    this.expect(close);
    this.#depth--;
    return inner;
  }

  /** andExpr := notExpr ("and" notExpr)* */
  and(inValuePath: boolean): Filter {
    let left = this.not(inValuePath);
    while (this.isKeyword(this.peek(), 'and')) {
      this.next();
      left = Object.freeze({ kind: 'and' as const, left, right: this.not(inValuePath) });
    }
    return left;
  }

  /** notExpr := "not" "(" orExpr ")" | atom */
  not(inValuePath: boolean): Filter {
    if (this.isKeyword(this.peek(), 'not')) {
      this.next();
      if (this.peek()?.t !== '(') throw this.fail('"not" must be followed by a parenthesized filter');
      return Object.freeze({ kind: 'not' as const, filter: this.atom(inValuePath) });
    }
    return this.atom(inValuePath);
  }

  atom(inValuePath: boolean): Filter {
    const token = this.next();
    if (!token) throw this.fail('the filter ends where an expression was expected');
    if (token.t === '(') return this.nested(inValuePath, ')');
    if (token.t !== 'word' || KEYWORDS.has(token.text.toLowerCase())) {
      throw this.fail(`expected an attribute path at ${token.at + 1}`);
    }
    if (++this.#terms > MAX_FILTER_TERMS) throw this.fail(`more than ${MAX_FILTER_TERMS} comparisons`);
    const path = parseAttrPath(token.text, this.#scimType);
    if (this.peek()?.t === '[') {
      if (inValuePath) throw this.fail('value filters cannot be nested');
      this.next();
      return this.#afterValuePath(path, this.nested(true, ']'));
    }
    return this.#comparison(path);
  }

  /**
   * After `attr[filter]`, a filter may go on with `.sub op value` (Entra ID sends
   * `emails[type eq "work"].value eq "x"`): the element must match both.
   */
  #afterValuePath(path: AttrPath, inner: Filter): Filter {
    const next = this.peek();
    if (next?.t === 'word' && next.text.startsWith('.')) {
      this.next();
      const sub = parseAttrPath(next.text.slice(1), this.#scimType);
      if (sub.uri !== undefined || sub.sub !== undefined) throw this.fail(`invalid sub-attribute "${next.text}"`);
      const test = this.#comparison(sub);
      return Object.freeze({ kind: 'valuePath' as const, path, filter: Object.freeze({ kind: 'and' as const, left: inner, right: test }) });
    }
    return Object.freeze({ kind: 'valuePath' as const, path, filter: inner });
  }

  #comparison(path: AttrPath): Filter {
    const opToken = this.next();
    if (opToken?.t !== 'word') throw this.fail(`expected an operator after "${path.attr}"`);
    const op = opToken.text.toLowerCase();
    if (op === 'pr') return Object.freeze({ kind: 'present' as const, path });
    if (!(COMPARE_OPS as readonly string[]).includes(op)) throw this.fail(`unknown operator "${opToken.text}"`);
    const valueToken = this.next();
    if (!valueToken) throw this.fail(`"${opToken.text}" needs a value`);
    return Object.freeze({ kind: 'compare' as const, path, op: op as CompareOp, value: this.#literal(valueToken) });
  }

  #literal(token: Token): Literal {
    if (token.t === 'string') return token.value;
    if (token.t !== 'word' || KEYWORDS.has(token.text.toLowerCase())) {
      throw this.fail(`expected a value at ${token.at + 1}`);
    }
    const text = token.text;
    const lowered = text.toLowerCase();
    if (lowered === 'true') return true;
    if (lowered === 'false') return false;
    if (lowered === 'null') return null;
    // RFC 7159 numbers only: `007` read as 7 would lose the zeros of an unquoted id.
    if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
    return unquotedFilterValue(text);
  }
}

function parser(text: string, scimType: ScimType, what: string): Parser {
  const fail = (why: string) => badRequest(scimType, `Invalid ${what}: ${why}`);
  if (typeof text !== 'string' || text.trim() === '') throw fail('it is empty');
  if (text.length > MAX_FILTER_LENGTH) throw fail(`longer than ${MAX_FILTER_LENGTH} characters`);
  return new Parser(tokenize(text, fail), fail, scimType);
}

/** Parses a filter expression; any fault is 400 `invalidFilter`. */
export function parseFilter(text: string): Filter {
  const p = parser(text, 'invalidFilter', 'filter');
  const filter = p.or(false);
  if (!p.done) throw p.fail(`unexpected "${describe(p.peek())}" at ${(p.peek()?.at ?? 0) + 1}`);
  return filter;
}

/** Parses a PATCH path: `attrPath`, `attrPath[valFilter]` or `attrPath[valFilter].subAttr`. */
export function parsePatchPath(text: string): PatchPath {
  const p = parser(text, 'invalidPath', 'path');
  const first = p.next();
  if (first?.t !== 'word') throw p.fail('expected an attribute path');
  const path = parseAttrPath(first.text, 'invalidPath');
  if (p.done) return Object.freeze({ kind: 'patchPath' as const, path });
  p.expect('[');
  const filter = p.nested(true, ']');
  let subAfterFilter: string | undefined;
  const next = p.next();
  if (next !== undefined) {
    if (next.t !== 'word' || !/^\.[A-Za-z$][A-Za-z0-9_$-]*$/.test(next.text) || !p.done) {
      throw p.fail(`unexpected "${describe(next)}" after the value filter`);
    }
    subAfterFilter = next.text.slice(1);
  }
  if (path.sub !== undefined) throw p.fail('a value filter applies to an attribute, not a sub-attribute');
  return Object.freeze({ kind: 'patchPath' as const, path, filter, ...(subAfterFilter !== undefined ? { subAfterFilter } : {}) });
}

function describe(token: Token | undefined): string {
  if (!token) return 'end';
  if (token.t === 'word') return token.text.slice(0, 40);
  if (token.t === 'string') return JSON.stringify(token.value).slice(0, 40);
  return token.t;
}
