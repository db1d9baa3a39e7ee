/**
 * The scenarios of `npm run bench:scale`, run at low concurrency against one team of (by default)
 * a million users and a group of 100,000 members: lookups by `userName eq` and `externalId eq`, a
 * `co` filter, index paging at the first, middle and last page, one member added to and removed
 * from the big group, and the big group read with and without its members. Each scenario has a
 * probe that checks one answer (the lookup finds its user, a page starts where index paging
 * says) before it is measured. Cursor paging (`cursorPagingScenarios`) measures the first,
 * middle and last page of 100 by cursor, the middle and last cursors found by walking the list.
 */
import type { Request } from 'autocannon';
import { summarize } from './load.ts';
import type { Measurement } from './load.ts';
import { PATCH_OP } from '../src/scim/schema/urns.ts';
import { progressBar } from './progress.ts';
import { badgeOf, BENCH_EXTENSION } from './scale-loader.ts';
import { externalIdOf, userNameOf } from '../test/support/rows.ts';
import type { UserNaming } from '../test/support/rows.ts';
import type { Probe } from './scenarios.ts';

export interface ScaleFixture {
  readonly accessToken: string;
  readonly naming: UserNaming;
  /** Users numbered 0..users-1, created in that order. */
  readonly users: number;
  readonly groupId: string;
  /** Ids of users in the big group, and of users outside it, when the run starts. */
  readonly memberIds: readonly string[];
  readonly nonMemberIds: readonly string[];
}

export interface ScaleScenario {
  readonly name: string;
  readonly expectStatus: number;
  readonly probe?: Probe;
  build(): Request[];
}

export const SCALE_SCENARIO_NAMES = {
  userNameEq: 'GET /Users?filter=userName eq',
  externalIdEq: 'GET /Users?filter=externalId eq',
  co: 'GET /Users?filter=userName co',
  sw: 'GET /Users?filter=userName sw',
  ew: 'GET /Users?filter=userName ew',
  extensionEq: 'GET /Users?filter=<extension>:badge eq',
  pageFirst: 'GET /Users first page of 100 (index)',
  pageMiddle: 'GET /Users middle page of 100 (index)',
  pageLast: 'GET /Users last page of 100 (index)',
  addMember: 'PATCH big group: add one member',
  removeMember: 'PATCH big group: remove one member',
  getGroupExcluded: 'GET big group ?excludedAttributes=members',
  getGroupFull: 'GET big group with its members',
} as const;

const SCIM = '/v2/scim';

/** Spreads lookups over the whole table, in an order unrelated to insertion. */
const scatter = (n: number, size: number): number => (n * 7_919 + 104_729) % size;

function varying(base: Request, next: (n: number) => { path: string; body?: string }): Request {
  let n = 0;
  return { ...base, setupRequest: (request: Request) => ({ ...request, ...next(n++) }) };
}

interface ListBody {
  readonly totalResults?: number;
  readonly Resources?: readonly { readonly userName?: string }[];
}

const findsOne = (expectedUserName: (body: ListBody) => boolean): Probe => (_status, text) => {
  const body = JSON.parse(text) as ListBody;
  return body.totalResults === 1 && expectedUserName(body) ? undefined : `expected exactly the looked-up user, got totalResults ${String(body.totalResults)}`;
};

/** Five digits for `sw` / `ew` lookups, spread like the others (ten matches each at 1,000,000 users). */
const fiveDigits = (n: number, users: number): string => String(scatter(n, Math.max(1, Math.floor(users / 10)))).padStart(5, '0');

/** At 1,000,000 users a five-digit `sw` or `ew` finds ten users (fewer when the run has fewer users). */
const findsTen: Probe = (_status, text) => {
  const body = JSON.parse(text) as ListBody;
  const n = body.Resources?.length ?? 0;
  return n >= 1 && n <= 10 && body.totalResults === n ? undefined : `expected 1 to 10 users, got ${n} (totalResults ${String(body.totalResults)})`;
};

/** A page of 100 must start with user number `first` (index paging orders by creation). */
const pageStartsWith = (naming: UserNaming, first: number, users: number): Probe => (_status, text) => {
  const body = JSON.parse(text) as ListBody;
  const expectedLength = Math.min(100, users - first);
  if (body.Resources?.length !== expectedLength) return `page has ${String(body.Resources?.length)} resources, expected ${expectedLength}`;
  const got = body.Resources[0]?.userName;
  return got === userNameOf(naming, first) ? undefined : `page starts with ${String(got)}, expected ${userNameOf(naming, first)}`;
};

/** The scenarios cursorPagingScenarios measures, named so that the cursor target judges them. */
export const CURSOR_SCENARIO_NAMES = {
  first: 'GET /Users first page of 100 (cursor)',
  middle: 'GET /Users middle page of 100 (cursor)',
  last: 'GET /Users last page of 100 (cursor)',
} as const;

interface CursorPage {
  readonly nextCursor?: string;
  readonly Resources?: readonly { readonly userName?: string }[];
}

/** A cursor page of 100 must start with user number `first`, and be the last page exactly when it ends the list. */
const cursorPageStartsWith = (naming: UserNaming, first: number, users: number): Probe => (status, text) => {
  const problem = pageStartsWith(naming, first, users)(status, text);
  if (problem) return problem;
  const last = first + 100 >= users;
  return ((JSON.parse(text) as CursorPage).nextCursor === undefined) === last ? undefined : `nextCursor ${last ? 'on' : 'missing from'} the page starting at ${first}`;
};

/**
 * Cursor paging (RFC 9865) at the first, middle and last page of 100 (target: p99 <= 20 ms each).
 * The middle and last cursors are the server's own: before anything is measured, the list is
 * walked once by nextCursor in pages of 1000 ids (the most a page may hold; projection and count
 * may change between the pages of one cursor walk), and a last step of count 900 lands the
 * cursor 100 users before the end. Only the page after each cursor is measured, never the walk.
 */
export async function cursorPagingScenarios(fixture: ScaleFixture, url: string): Promise<ScaleScenario[]> {
  const { naming, users } = fixture;
  const bearer = { authorization: `Bearer ${fixture.accessToken}` };
  const page = async (count: number, cursor: string, attributes = 'id'): Promise<CursorPage> => {
    const res = await fetch(`${url}${SCIM}/Users?count=${count}&attributes=${attributes}&cursor=${cursor}`, { headers: bearer });
    if (res.status !== 200) throw new Error(`cursor walk: ${res.status} ${await res.text()}`);
    return (await res.json()) as CursorPage;
  };
  const middle = Math.floor(users / 2);
  const last = Math.max(0, users - 100);
  const walk = progressBar('cursors', users);
  const cursors = new Map<number, string>([[0, '']]);
  // Invariant: `cursor` starts the page at user `at`.
  let cursor = '';
  for (let at = 0; at < last; ) {
    const step = Math.min(1000, (at < middle ? middle : last) - at);
    const next = (await page(step, cursor)).nextCursor;
    if (next === undefined) throw new Error(`cursor walk: no nextCursor after user ${at + step}`);
    cursor = next;
    at += step;
    if (at === middle || at === last) cursors.set(at, cursor);
    walk.update(at);
  }
  walk.done();
  const scenario = (name: string, first: number): ScaleScenario => ({
    name,
    expectStatus: 200,
    probe: cursorPageStartsWith(naming, first, users),
    build: () => [{ method: 'GET', headers: bearer, path: `${SCIM}/Users?count=100&cursor=${cursors.get(first)!}` }],
  });
  return [scenario(CURSOR_SCENARIO_NAMES.first, 0), scenario(CURSOR_SCENARIO_NAMES.middle, middle), scenario(CURSOR_SCENARIO_NAMES.last, last)];
}

export function scaleScenarios(fixture: ScaleFixture): ScaleScenario[] {
  const { naming, users } = fixture;
  const bearer = { authorization: `Bearer ${fixture.accessToken}` };
  const scimWrite = { ...bearer, 'content-type': 'application/scim+json' };
  const list = (filter: string) => `${SCIM}/Users?filter=${encodeURIComponent(filter)}`;
  const page = (name: string, startIndex: number): ScaleScenario => ({
    name,
    expectStatus: 200,
    probe: pageStartsWith(naming, startIndex - 1, users),
    build: () => [{ method: 'GET', headers: bearer, path: `${SCIM}/Users?startIndex=${startIndex}&count=100` }],
  });
  const middle = Math.floor(users / 2) + 1;
  const last = Math.max(1, users - 99);
  const groupPath = `${SCIM}/Groups/${fixture.groupId}`;
  const memberPatch = (operation: Record<string, unknown>) => JSON.stringify({ schemas: [PATCH_OP], Operations: [operation] });

  return [
    {
      name: SCALE_SCENARIO_NAMES.userNameEq,
      expectStatus: 200,
      probe: findsOne((b) => b.Resources?.[0]?.userName === userNameOf(naming, scatter(0, users))),
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: list(`userName eq "${userNameOf(naming, scatter(n, users))}"`) }))],
    },
    {
      name: SCALE_SCENARIO_NAMES.externalIdEq,
      expectStatus: 200,
      probe: findsOne((b) => b.Resources?.[0]?.userName === userNameOf(naming, scatter(0, users))),
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: list(`externalId eq "${externalIdOf(naming, scatter(n, users))}"`) }))],
    },
    {
      name: SCALE_SCENARIO_NAMES.co,
      expectStatus: 200,
      build: () => [{ method: 'GET', headers: bearer, path: list('userName co "77777"') }],
    },
    {
      // "user0" and five digits: the ten users whose 7-digit number starts with them.
      name: SCALE_SCENARIO_NAMES.sw,
      expectStatus: 200,
      probe: findsTen,
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: list(`userName sw "${naming.prefix}0${fiveDigits(n, users)}"`) }))],
    },
    {
      // Five digits and the domain: the ten users whose 7-digit number ends with them.
      name: SCALE_SCENARIO_NAMES.ew,
      expectStatus: 200,
      probe: findsTen,
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: list(`userName ew "${fiveDigits(n, users)}@${naming.domain}"`) }))],
    },
    {
      // An extension attribute declared uniqueness: server, looked up case-insensitively.
      name: SCALE_SCENARIO_NAMES.extensionEq,
      expectStatus: 200,
      probe: findsOne((b) => b.Resources?.[0]?.userName === userNameOf(naming, scatter(0, users))),
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: list(`${BENCH_EXTENSION}:badge eq "${badgeOf(scatter(n, users)).toLowerCase()}"`) }))],
    },
    page(SCALE_SCENARIO_NAMES.pageFirst, 1),
    page(SCALE_SCENARIO_NAMES.pageMiddle, middle),
    page(SCALE_SCENARIO_NAMES.pageLast, last),
    {
      name: SCALE_SCENARIO_NAMES.addMember,
      expectStatus: 204,
      build: () => [
        varying({ method: 'PATCH', headers: scimWrite, path: groupPath }, (n) => ({
          path: groupPath,
          body: memberPatch({ op: 'add', path: 'members', value: [{ value: fixture.nonMemberIds[n % fixture.nonMemberIds.length] }] }),
        })),
      ],
    },
    {
      name: SCALE_SCENARIO_NAMES.removeMember,
      expectStatus: 204,
      build: () => [
        varying({ method: 'PATCH', headers: scimWrite, path: groupPath }, (n) => ({
          path: groupPath,
          body: memberPatch({ op: 'remove', path: `members[value eq "${fixture.memberIds[n % fixture.memberIds.length]}"]` }),
        })),
      ],
    },
    {
      name: SCALE_SCENARIO_NAMES.getGroupExcluded,
      expectStatus: 200,
      probe: (_status, text) => ('members' in (JSON.parse(text) as object) ? 'members were returned' : undefined),
      build: () => [{ method: 'GET', headers: bearer, path: `${groupPath}?excludedAttributes=members` }],
    },
    {
      name: SCALE_SCENARIO_NAMES.getGroupFull,
      expectStatus: 200,
      probe: (_status, text) => {
        const members = (JSON.parse(text) as { members?: unknown[] }).members;
        return Array.isArray(members) && members.length > 0 ? undefined : 'no members returned';
      },
      build: () => [{ method: 'GET', headers: bearer, path: groupPath }],
    },
  ];
}

/** The big group read with its members, timed to its first body byte (one request at a time). */
export const FIRST_BYTE_SCENARIO = 'GET big group with its members: first byte';

/**
 * Time to the first byte of the big group's body, one request at a time for `seconds` (at least
 * three requests), each read to its end: autocannon only times whole responses. The body's first
 * chunk is what a client can start parsing; the whole group's members follow, streamed.
 */
export async function firstByte(url: string, fixture: ScaleFixture, seconds: number): Promise<Measurement> {
  const headers = { authorization: `Bearer ${fixture.accessToken}` };
  const latencies: number[] = [];
  const started = performance.now();
  let errors = 0;
  while (latencies.length + errors < 3 || performance.now() - started < seconds * 1000) {
    const t0 = performance.now();
    const res = await fetch(`${url}${SCIM}/Groups/${fixture.groupId}`, { headers });
    const reader = res.body!.getReader();
    const first = await reader.read();
    const at = performance.now() - t0;
    let bytes = first.value?.length ?? 0;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes += chunk.value.length;
    if (res.status === 200 && bytes > 0) latencies.push(at);
    else errors++;
  }
  const m = summarize([{ latencies: Float64Array.from(latencies), errors, unexpected: {}, seconds: (performance.now() - started) / 1000, stoppedEarly: false }]);
  return m;
}
