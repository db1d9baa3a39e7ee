/**
 * The filter grammar of RFC 7644 section 3.4.2.2, the PATCH path grammar of section 3.5.2 and
 * the attribute path grammar of section 3.10, at the parser level (no schema, no I/O): operator
 * precedence and grouping, case-insensitive keywords, both quoting styles with their escapes,
 * literal types, value paths (including Entra ID's `emails[...].value eq "x"` form), URN paths,
 * and every refusal as a ScimError 400 with `invalidFilter` or `invalidPath`. A fast-check
 * property holds the parsers to "a value or a 400, never anything else, and quickly" on random
 * text; a deadline turns a parser that loops forever into a failure instead of a hung suite.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { Script, createContext } from 'node:vm';
import fc from 'fast-check';
import { ScimError } from '../../src/scim/errors.ts';
import type { ScimType } from '../../src/scim/errors.ts';
import type { AttrPath, CompareOp, Filter, Literal, PatchPath } from '../../src/scim/filter/ast.ts';
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, MAX_FILTER_TERMS, parseFilter, parsePatchPath } from '../../src/scim/filter/parse.ts';
import { MAX_PATH_LENGTH, parseAttrPath } from '../../src/scim/path.ts';

const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const path = (attr: string, extra: { uri?: string; sub?: string } = {}): AttrPath => ({
  kind: 'attrPath',
  ...(extra.uri !== undefined ? { uri: extra.uri } : {}),
  attr,
  ...(extra.sub !== undefined ? { sub: extra.sub } : {}),
});
const cmp = (p: AttrPath | string, op: CompareOp, value: Literal): Filter => ({ kind: 'compare', path: typeof p === 'string' ? path(p) : p, op, value });
const pr = (p: AttrPath | string): Filter => ({ kind: 'present', path: typeof p === 'string' ? path(p) : p });
const and = (left: Filter, right: Filter): Filter => ({ kind: 'and', left, right });
const or = (left: Filter, right: Filter): Filter => ({ kind: 'or', left, right });
const not = (filter: Filter): Filter => ({ kind: 'not', filter });
const vp = (p: AttrPath | string, filter: Filter): Filter => ({ kind: 'valuePath', path: typeof p === 'string' ? path(p) : p, filter });

const HANG_GUARD_MS = 10_000;

const deadline = { sandbox: createContext({ job: (): unknown => undefined }), script: new Script('job()') };

/**
 * Runs `fn` under a hard deadline: a parser stuck in a loop fails the test instead of hanging it.
 * A guard against a hang, far above any parse, never a measure of speed (issue 27 item 14).
 */
function withinDeadline<T>(ms: number, fn: () => T): T {
  deadline.sandbox.job = fn;
  return deadline.script.runInContext(deadline.sandbox, { timeout: ms }) as T;
}

/** The ScimError `fn` throws; fails when it returns or throws anything else. */
function refusal(fn: () => unknown, label: string): ScimError {
  try {
    const value = withinDeadline(HANG_GUARD_MS, fn);
    assert.fail(`${label}: expected a refusal, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    assert.ok(error instanceof ScimError, `${label}: threw ${String(error)}`);
    return error;
  }
}

function assertRefused(fn: () => unknown, scimType: ScimType, label: string): void {
  const error = refusal(fn, label);
  assert.equal(error.status, 400, label);
  assert.equal(error.scimType, scimType, `${label}: ${error.message}`);
}

/** Every node of a parsed tree is frozen (ast.ts: consumers may share them freely). */
function assertDeepFrozen(value: unknown, label: string): void {
  if (value === null || typeof value !== 'object') return;
  assert.ok(Object.isFrozen(value), `${label}: a node is not frozen`);
  for (const child of Object.values(value)) assertDeepFrozen(child, label);
}

describe('parseFilter (RFC 7644 3.4.2.2)', () => {
  it('RFC 7644 3.4.2.2 precedence: not binds tighter than and, and tighter than or; both associate left', () => {
    const cases: [string, Filter][] = [
      ['a eq 1 or b eq 2 and c eq 3', or(cmp('a', 'eq', 1), and(cmp('b', 'eq', 2), cmp('c', 'eq', 3)))],
      ['a eq 1 and b eq 2 or c eq 3', or(and(cmp('a', 'eq', 1), cmp('b', 'eq', 2)), cmp('c', 'eq', 3))],
      ['a pr and b pr and c pr', and(and(pr('a'), pr('b')), pr('c'))],
      ['a pr or b pr or c pr', or(or(pr('a'), pr('b')), pr('c'))],
      ['not (a pr) and b pr', and(not(pr('a')), pr('b'))],
      ['a pr or not (b pr) and c pr', or(pr('a'), and(not(pr('b')), pr('c')))],
      ['not (a pr or b pr)', not(or(pr('a'), pr('b')))],
      ['not (not (a pr))', not(not(pr('a')))],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseFilter(text), expected, text);
  });

  it('RFC 7644 3.4.2.2 grouping: parentheses override precedence and may be redundant', () => {
    const cases: [string, Filter][] = [
      ['(a eq 1 or b eq 2) and c eq 3', and(or(cmp('a', 'eq', 1), cmp('b', 'eq', 2)), cmp('c', 'eq', 3))],
      ['a pr and (b pr or c pr)', and(pr('a'), or(pr('b'), pr('c')))],
      ['((a pr))', pr('a')],
      ['(a pr)and(b pr)', and(pr('a'), pr('b'))],
      ['not(a pr)', not(pr('a'))],
      ['  \t(a pr)\r\n', pr('a')],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseFilter(text), expected, text);
  });

  it('RFC 7644 3.4.2.2: operators and logical keywords are case-insensitive; attribute names are kept as written', () => {
    const cases: [string, Filter][] = [
      ['userName EQ "x"', cmp('userName', 'eq', 'x')],
      ['UserName Eq "x"', cmp('UserName', 'eq', 'x')],
      ['title PR', pr('title')],
      ['a Pr AND b pR Or NOT (c pr)', or(and(pr('a'), pr('b')), not(pr('c')))],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseFilter(text), expected, text);
    for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const) {
      assert.deepEqual(parseFilter(`title ${op.toUpperCase()} "v"`), cmp('title', op, 'v'), op);
      assert.deepEqual(parseFilter(`title ${op} "v"`), cmp('title', op, 'v'), op);
    }
  });

  it('RFC 7644 3.4.2.2 compValue: double-quoted strings take JSON escapes (RFC 7159 section 7)', () => {
    const cases: [string, string][] = [
      ['title eq "plain"', 'plain'],
      ['title eq ""', ''],
      [String.raw`title eq "say \"hi\""`, 'say "hi"'],
      [String.raw`title eq "back\\slash"`, 'back\\slash'],
      [String.raw`title eq "\u00e9t\u00C9"`, 'étÉ'],
      [String.raw`title eq "tab\tnew\nline\/"`, 'tab\tnew\nline/'],
      [`title eq "O'Brien"`, "O'Brien"],
      ['title eq "and or not ( ) [ ] pr"', 'and or not ( ) [ ] pr'],
      ['title eq "100% _under_"', '100% _under_'],
      ['title eq "Émile é"', 'Émile é'],
    ];
    for (const [text, value] of cases) assert.deepEqual(parseFilter(text), cmp('title', 'eq', value), text);
  });

  it("the contract's single-quoted strings: a backslash escapes the next character", () => {
    const cases: [string, string][] = [
      ["userName eq 'alice@contoso.example'", 'alice@contoso.example'],
      ["userName eq ''", ''],
      [String.raw`userName eq 'O\'Brien'`, "O'Brien"],
      [String.raw`userName eq 'a\\b'`, 'a\\b'],
      [`userName eq 'say "hi"'`, 'say "hi"'],
      ["userName eq 'a or b'", 'a or b'],
    ];
    for (const [text, value] of cases) assert.deepEqual(parseFilter(text), cmp('userName', 'eq', value), text);
  });

  it('RFC 7644 3.4.2.2 compValue: numbers (RFC 7159 grammar), true, false and null in any case', () => {
    const cases: [string, Literal][] = [
      ['x eq 42', 42],
      ['x eq -1.5', -1.5],
      ['x eq 0', 0],
      ['x eq 1e3', 1000],
      ['x eq 2.5E-1', 0.25],
      ['x eq true', true],
      ['x eq TRUE', true],
      ['x eq False', false],
      ['x eq null', null],
      ['x eq NULL', null],
      ['x eq "true"', 'true'],
      ['x eq "42"', '42'],
    ];
    for (const [text, value] of cases) assert.deepEqual(parseFilter(text), cmp('x', 'eq', value), text);
  });

  it('Postman collection quirk (compat.ts): an unquoted word that is not a number is that string, leading zeros kept', () => {
    assert.deepEqual(parseFilter('name.FamilyName eq User'), cmp(path('name', { sub: 'FamilyName' }), 'eq', 'User'));
    assert.deepEqual(parseFilter('emails.Value co contoso.example'), cmp(path('emails', { sub: 'Value' }), 'co', 'contoso.example'));
    // 007 is not an RFC 7159 number: read as a number it would lose its zeros.
    assert.deepEqual(parseFilter('externalId eq 007'), cmp('externalId', 'eq', '007'));
  });

  it('RFC 7644 3.4.2.2 valuePath: attrPath "[" valFilter "]", alone or combined', () => {
    const cases: [string, Filter][] = [
      ['emails[type eq "work"]', vp('emails', cmp('type', 'eq', 'work'))],
      ['emails[type eq "work" and value co "@example.com"]', vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'co', '@example.com')))],
      ['emails[not (primary eq true)]', vp('emails', not(cmp('primary', 'eq', true)))],
      ['userName sw "a" and emails[type eq "work" or value pr]', and(cmp('userName', 'sw', 'a'), vp('emails', or(cmp('type', 'eq', 'work'), pr('value'))))],
      ['not (emails[primary eq true])', not(vp('emails', cmp('primary', 'eq', true)))],
      ['members[value eq "2819c223"]', vp('members', cmp('value', 'eq', '2819c223'))],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseFilter(text), expected, text);
  });

  it('Entra ID: emails[type eq "work"].value eq "x" means an element matching both', () => {
    assert.deepEqual(
      parseFilter('emails[type eq "work"].value eq "x@contoso.example"'),
      vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'eq', 'x@contoso.example'))),
    );
    assert.deepEqual(
      parseFilter('emails[type eq "work"].value pr and active eq true'),
      and(vp('emails', and(cmp('type', 'eq', 'work'), pr('value'))), cmp('active', 'eq', true)),
    );
  });

  it('RFC 7644 3.10: URN-prefixed paths keep everything before the last colon as the URI', () => {
    const cases: [string, Filter][] = [
      [`${ENTERPRISE}:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"`, cmp(path('manager', { uri: ENTERPRISE, sub: 'value' }), 'eq', '26118915-6090-4610-87e4-49d8ca9f808d')],
      [`${ENTERPRISE}:department eq "R&D"`, cmp(path('department', { uri: ENTERPRISE }), 'eq', 'R&D')],
      [`${CORE_USER}:userName sw "j"`, cmp(path('userName', { uri: CORE_USER }), 'sw', 'j')],
      [`${CORE_USER}:name.familyName pr`, pr(path('name', { uri: CORE_USER, sub: 'familyName' }))],
      [`${ENTERPRISE}:manager[value eq "x"]`, vp(path('manager', { uri: ENTERPRISE }), cmp('value', 'eq', 'x'))],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseFilter(text), expected, text);
  });

  it('ast.ts: every node of a parsed filter is frozen', () => {
    assertDeepFrozen(parseFilter('a pr and (b eq "x" or not (emails[type eq "work"].value co "y"))'), 'filter');
  });

  it('RFC 7644 3.4.2.2: malformed filters are 400 invalidFilter', () => {
    const bad: [string, string][] = [
      ['', 'empty'],
      ['   ', 'blank'],
      ['userName eq "abc', 'unterminated double-quoted string'],
      ["userName eq 'abc", 'unterminated single-quoted string'],
      [String.raw`userName eq "abc\"`, 'escaped closing quote leaves the string open'],
      [String.raw`userName eq 'abc\'`, 'escaped closing single quote leaves the string open'],
      [String.raw`userName eq "\x41"`, 'invalid JSON escape'],
      ['userName eq "a\u0001b"', 'raw control character in a JSON string'],
      ['userName eq', 'missing value at the end'],
      ['(userName eq)', 'missing value before ")"'],
      ['userName eq and title pr', 'a keyword where the value belongs'],
      ['userName', 'missing operator'],
      ['userName "x"', 'a string where the operator belongs'],
      ['userName zz "x"', 'unknown operator'],
      ['userName like "x"', 'unknown operator (SQL)'],
      ['userName == "x"', 'unknown operator (symbol)'],
      ['(userName eq "a"', 'unclosed parenthesis'],
      ['userName eq "a")', 'unopened parenthesis'],
      ['()', 'empty group'],
      ['userName eq "a" "b"', 'trailing value'],
      ['userName eq "a" title pr', 'two expressions without and/or'],
      ['and userName pr', 'leading and'],
      ['userName pr and', 'trailing and'],
      ['userName pr or', 'trailing or'],
      ['not userName pr', 'not without parentheses'],
      ['not', 'bare not'],
      ['emails[type eq "work"', 'unclosed value filter'],
      ['emails[]', 'empty value filter'],
      ['emails]', 'stray ]'],
      ['emails[type[value eq "x"] eq "y"]', 'nested value filter'],
      ['emails[value eq "x" and phoneNumbers[type eq "a"]]', 'nested value filter after and'],
      ['emails[type eq "work"].value.x eq "y"', 'sub-attribute path after a value filter'],
      ['emails[type eq "work"]. eq "y"', 'empty sub-attribute after a value filter'],
      ['a.b.c eq "x"', 'three-part path'],
      ['1abc eq "x"', 'name starting with a digit'],
      ['urn:x eq "y"', 'URN without an attribute'],
      [`${ENTERPRISE}: eq "x"`, 'URN with an empty attribute'],
    ];
    for (const [text, label] of bad) assertRefused(() => parseFilter(text), 'invalidFilter', `${label}: ${text}`);
  });

  it(`RFC 7644 7 (denial of service): a filter longer than ${MAX_FILTER_LENGTH} characters is 400 invalidFilter`, () => {
    const at = `userName eq "${'x'.repeat(MAX_FILTER_LENGTH - 'userName eq ""'.length)}"`;
    assert.equal(at.length, MAX_FILTER_LENGTH);
    assert.equal(parseFilter(at).kind, 'compare');
    assertRefused(() => parseFilter(`${at} `), 'invalidFilter', 'one character too long');
  });

  it(`RFC 7644 7 (denial of service): ${MAX_FILTER_DEPTH} levels of grouping parse, one more is refused, and deep input fails fast`, () => {
    const nested = (levels: number) => `${'('.repeat(levels)}a pr${')'.repeat(levels)}`;
    assert.deepEqual(parseFilter(nested(MAX_FILTER_DEPTH)), pr('a'));
    assertRefused(() => parseFilter(nested(MAX_FILTER_DEPTH + 1)), 'invalidFilter', 'one level too deep');
    const notChain = (levels: number) => `${'not ('.repeat(levels)}a pr${')'.repeat(levels)}`;
    assert.equal(parseFilter(notChain(MAX_FILTER_DEPTH)).kind, 'not');
    assertRefused(() => parseFilter(notChain(MAX_FILTER_DEPTH + 1)), 'invalidFilter', 'not chain one level too deep');
    // A value filter is a level too.
    assert.equal(parseFilter(`${'('.repeat(MAX_FILTER_DEPTH - 1)}emails[value pr]${')'.repeat(MAX_FILTER_DEPTH - 1)}`).kind, 'valuePath');
    assertRefused(() => parseFilter(`${'('.repeat(MAX_FILTER_DEPTH)}emails[value pr]${')'.repeat(MAX_FILTER_DEPTH)}`), 'invalidFilter', 'value filter one level too deep');

    for (const hostile of ['('.repeat(MAX_FILTER_LENGTH), 'not ('.repeat(MAX_FILTER_LENGTH / 5), `${'('.repeat(2000)}a pr${')'.repeat(2000)}`]) {
      // Refused by the depth bound, as the parser reaches it: not after reading the whole text.
      const error = refusal(() => parseFilter(hostile), `hostile nesting of ${hostile.length} characters`);
      assert.equal(error.scimType, 'invalidFilter');
      assert.match(error.message, new RegExp(`nested deeper than ${MAX_FILTER_DEPTH} levels`), error.message);
    }
  });

  it(`RFC 7644 7 (denial of service): more than ${MAX_FILTER_TERMS} comparisons are 400 invalidFilter`, () => {
    const terms = (n: number) => Array.from({ length: n }, () => 'a pr').join(' or ');
    assert.equal(parseFilter(terms(MAX_FILTER_TERMS)).kind, 'or');
    assertRefused(() => parseFilter(terms(MAX_FILTER_TERMS + 1)), 'invalidFilter', 'too many terms');
  });

  it('whitespace: any Unicode space separates tokens (no-break space, vertical tab) and never stalls the tokenizer', () => {
    for (const space of ['\u00a0', '\u000b', '\u000c', '\u2003', '\u3000', '\ufeff']) {
      const text = `userName${space}eq${space}"x"${space}and${space}title${space}pr`;
      assert.deepEqual(withinDeadline(HANG_GUARD_MS, () => parseFilter(text)), and(cmp('userName', 'eq', 'x'), pr('title')), JSON.stringify(space));
    }
  });
});

describe('parsePatchPath (RFC 7644 3.5.2)', () => {
  it('RFC 7644 3.5.2 PATH: attrPath, valuePath and valuePath "." subAttr', () => {
    const cases: [string, PatchPath][] = [
      ['members', { kind: 'patchPath', path: path('members') }],
      ['name.familyName', { kind: 'patchPath', path: path('name', { sub: 'familyName' }) }],
      ['members[value eq "2819c223-7f76-453a-919d-413861904646"]', { kind: 'patchPath', path: path('members'), filter: cmp('value', 'eq', '2819c223-7f76-453a-919d-413861904646') }],
      ['emails[type eq "work"].value', { kind: 'patchPath', path: path('emails'), filter: cmp('type', 'eq', 'work'), subAfterFilter: 'value' }],
      ['addresses[type eq "work" and primary eq true].streetAddress', { kind: 'patchPath', path: path('addresses'), filter: and(cmp('type', 'eq', 'work'), cmp('primary', 'eq', true)), subAfterFilter: 'streetAddress' }],
      ['emails[type EQ "work" OR NOT (value pr)]', { kind: 'patchPath', path: path('emails'), filter: or(cmp('type', 'eq', 'work'), not(pr('value'))) }],
      [`${ENTERPRISE}:manager.value`, { kind: 'patchPath', path: path('manager', { uri: ENTERPRISE, sub: 'value' }) }],
      [`${ENTERPRISE}:department`, { kind: 'patchPath', path: path('department', { uri: ENTERPRISE }) }],
      // A whole extension parses as a URN path; patch.ts recognizes it as the extension.
      [ENTERPRISE, { kind: 'patchPath', path: path('User', { uri: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0' }) }],
    ];
    for (const [text, expected] of cases) {
      const parsed = parsePatchPath(text);
      assert.deepEqual(parsed, expected, text);
      assertDeepFrozen(parsed, text);
    }
  });

  it('RFC 7644 3.5.2: malformed PATCH paths are 400 invalidPath', () => {
    const bad: [string, string][] = [
      ['', 'empty'],
      [' ', 'blank'],
      ['"emails"', 'a string, not a path'],
      ['emails type', 'two words'],
      ['emails[type eq "work"', 'unclosed value filter'],
      ['emails[type eq "work"]]', 'stray ]'],
      ['emails[]', 'empty value filter'],
      ['emails[type eq]', 'missing value'],
      ['emails[type zz "work"]', 'unknown operator'],
      ['emails[type eq "work]', 'unterminated string'],
      ['emails[type[value eq "x"] eq "y"]', 'nested value filter'],
      ['emails[value eq "x" and phoneNumbers[type eq "a"]]', 'nested value filter after and'],
      ['emails[type eq "work"][value eq "x"]', 'two value filters'],
      ['emails[type eq "work"].value.display', 'two sub-attributes after the filter'],
      ['emails[type eq "work"].1value', 'sub-attribute starting with a digit'],
      ['emails[type eq "work"] value', 'word after the filter without a dot'],
      ['emails[type eq "work"].value extra', 'trailing word'],
      ['name.familyName[value eq "x"]', 'value filter on a sub-attribute'],
      ['a.b.c', 'three-part path'],
      ['urn:x', 'URN without an attribute'],
      [`emails[type eq "${'x'.repeat(MAX_FILTER_LENGTH)}"]`, 'over-long path'],
    ];
    for (const [text, label] of bad) assertRefused(() => parsePatchPath(text), 'invalidPath', `${label}: ${text}`);
  });
});

describe('parseAttrPath (RFC 7644 3.10)', () => {
  it('RFC 7644 3.10: [URI ":"] ATTRNAME ["." subAttr]', () => {
    const cases: [string, AttrPath][] = [
      ['userName', path('userName')],
      ['name.givenName', path('name', { sub: 'givenName' })],
      ['groups.$ref', path('groups', { sub: '$ref' })],
      ['x509Certificates.value', path('x509Certificates', { sub: 'value' })],
      ['a_b-c', path('a_b-c')],
      [`${ENTERPRISE}:manager.value`, path('manager', { uri: ENTERPRISE, sub: 'value' })],
      [`${ENTERPRISE.toUpperCase().replace('URN', 'urn')}:employeeNumber`, path('employeeNumber', { uri: ENTERPRISE.toUpperCase().replace('URN', 'urn') })],
      [`URN:ietf:params:scim:schemas:core:2.0:User:userName`, path('userName', { uri: 'URN:ietf:params:scim:schemas:core:2.0:User' })],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseAttrPath(text, 'invalidPath'), expected, text);
  });

  it('RFC 7644 3.10: malformed attribute paths are 400 with the scimType the caller names', () => {
    const bad = ['', '.', 'a.', '.a', 'a.b.c', '1a', 'a b', 'a$', '$refs', 'urn:', 'urn:x', `${ENTERPRISE}:`, `${ENTERPRISE}:a.b.c`, 'x'.repeat(MAX_PATH_LENGTH + 1)];
    for (const text of bad) {
      assertRefused(() => parseAttrPath(text, 'invalidPath'), 'invalidPath', JSON.stringify(text.slice(0, 40)));
      assertRefused(() => parseAttrPath(text, 'invalidValue'), 'invalidValue', JSON.stringify(text.slice(0, 40)));
    }
    assert.deepEqual(parseAttrPath('x'.repeat(MAX_PATH_LENGTH), 'invalidPath'), path('x'.repeat(MAX_PATH_LENGTH)));
  });
});

/** Text made of the grammar's own pieces, so random input reaches deep into the parser. */
const grammarSoup = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.constantFrom(
          '(', ')', '[', ']', '"', "'", '\\', '.', ':', ' ', '\t', '\u00a0', '\u2028', 'eq', 'ne', 'co', 'sw', 'gt', 'le', 'pr', 'and', 'or', 'not', 'NOT',
          'true', 'null', '42', '-1.5e3', 'userName', 'emails', 'value', 'type', '.value', 'name.givenName', `${ENTERPRISE}:manager.value`,
          '"work"', "'x'", String.raw`"\u00e9"`, String.raw`"\"`, 'é', '%', '_',
        ),
        fc.string({ maxLength: 6 }),
      ),
      { maxLength: 40 },
    ),
    fc.constantFrom('', ' '),
  )
  .map(([parts, separator]) => parts.join(separator));

describe('parser robustness (property)', () => {
  it('any text: parseFilter / parsePatchPath return a frozen tree or throw a ScimError 400 of their scimType, never hang', () => {
    const check = (text: string) => {
      for (const [parse, scimType] of [[parseFilter, 'invalidFilter'], [parsePatchPath, 'invalidPath']] as const) {
        try {
          assertDeepFrozen(withinDeadline(HANG_GUARD_MS, () => parse(text)), JSON.stringify(text));
        } catch (error) {
          if (error instanceof assert.AssertionError) throw error;
          assert.ok(error instanceof ScimError, `${JSON.stringify(text)} threw ${String(error)}`);
          assert.equal(error.status, 400);
          assert.equal(error.scimType, scimType, `${JSON.stringify(text)}: ${error.message}`);
        }
      }
    };
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'binary-ascii', maxLength: 80 }), grammarSoup), check),
      { numRuns: 3000 },
    );
  });
});
