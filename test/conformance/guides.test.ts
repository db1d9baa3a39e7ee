/**
 * Issue 9 item 9: the integration guides in docs/integrations cannot drift from what Rollcall
 * does. Every request a guide shows is replayed, in order, against a fresh Rollcall, and its
 * answer is checked against the response the guide shows next:
 * - an `http` fence that starts with a method is a request (request line, headers, blank line,
 *   body); one that starts with `HTTP/1.1 NNN` is the expected answer: that status, the listed
 *   Content-Type and Location, and a JSON body that must contain what it shows (objects may hold
 *   more keys; arrays match element by element);
 * - a `sh` fence that starts with `curl` is a request too (`-X`, `-H`, `-d`/`--data`, `-u`; shell
 *   variables `$ROLLCALL` for the base URL and `$NAME` for `{name}`);
 * - `{name}` stands for a value: in a request it must be known; in an answer it is captured the
 *   first time and compared afterwards. `{client_id}` and `{client_secret}` are a client bound
 *   to the team; `{token}` is an access token of the team unless the guide obtains one itself;
 * - a `ts` fence whose first line is `// rollcall-client.ts` is written to a file and run with
 *   ROLLCALL and TOKEN set, against a listening Rollcall; it must exit 0;
 * - the `npx rollcall client ...` lines of a `sh` fence are run, as the operator runs them, on
 *   the database the replayed app uses; a `text` fence right after shows what they print, its
 *   `{name}` placeholders captured (test/support/guide-replay.ts);
 * - a guide that names Entra's login host (`https://login.microsoftonline.com`) is replayed with a
 *   local Entra stand-in in its place: `{tenant_id}` and `{object_id}` are the stand-in's tenant and
 *   provisioning identity, and `{client_assertion}` is a fresh assertion it signs for `{client_id}`.
 * Every guide is replayed on each engine. The format is described in docs/integrations/README.md.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import { clientCommands, issuesToken, matchOutput, runRollcall, sharedEngine, shellWords, substitute } from '../support/guide-replay.ts';
import type { CliTarget, Vars } from '../support/guide-replay.ts';
import { registerClient } from '../support/oauth.ts';

const DOCS = join(import.meta.dirname, '../../docs/integrations');
const BASE_URL = 'https://rollcall.example.com';
const GUIDES = ['entra-id.md', 'okta.md', 'scripts.md'];
/** Entra's login host, as guides name it; replayed against a local stand-in. */
const ENTRA_LOGIN = 'https://login.microsoftonline.com';
/** Marks a curl `-u user:password` whose Basic header is built when the request is sent. */
const BASIC_LATER = 'curl-user ';

interface Fence {
  readonly lang: string;
  readonly text: string;
  readonly line: number;
}

function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // A fence may be indented (inside a list item); its lines lose that indentation.
    const open = /^( *)```(\w+)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^ *```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(Math.min(indent, lines[i]!.length - lines[i]!.trimStart().length)));
    out.push({ lang: open[2]!, text: body.join('\n'), line: start + 1 });
  }
  return out;
}

interface Request {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

interface Expected {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

function headersAndBody(lines: string[]): { headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = {};
  let i = 0;
  for (; i < lines.length && lines[i]!.trim() !== ''; i++) {
    const colon = lines[i]!.indexOf(':');
    headers[lines[i]!.slice(0, colon).trim().toLowerCase()] = lines[i]!.slice(colon + 1).trim();
  }
  const body = lines.slice(i + 1).join('\n').trim();
  return body === '' ? { headers } : { headers, body };
}

function curlRequest(text: string): Request {
  // $ROLLCALL is the base URL; $NAME is the placeholder {name}.
  const words = shellWords(text.split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n'), { name: 'ROLLCALL', url: BASE_URL });
  assert.equal(words[0], 'curl');
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  let body: string | undefined;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-X' || w === '--request') method = words[++i];
    else if (w === '-H' || w === '--header') {
      const h = words[++i]!;
      headers[h.slice(0, h.indexOf(':')).trim().toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (w === '-d' || w === '--data' || w === '--data-raw') body = body === undefined ? words[++i] : `${body}&${words[++i]}`;
    // Encoded when sent, once its {placeholders} are known.
    else if (w === '-u' || w === '--user') headers.authorization = `${BASIC_LATER}${words[++i]!}`;
    else if (w.startsWith('-')) continue;
    else url = w;
  }
  assert.ok(url, 'curl without a URL');
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return { method: method ?? (body !== undefined ? 'POST' : 'GET'), path: url.slice(BASE_URL.length), headers, ...(body !== undefined ? { body } : {}) };
}

/** `expected` (with {placeholders}) is contained in `actual`; unknown placeholders are captured. */
function contains(actual: unknown, expected: unknown, vars: Vars, at: string): void {
  if (typeof expected === 'string') {
    const whole = /^\{([a-z][a-z0-9_]*)\}$/.exec(expected);
    if (whole && !(whole[1]! in vars)) {
      assert.equal(typeof actual, 'string', `${at}: a value to capture as {${whole[1]}}`);
      vars[whole[1]!] = actual as string;
      return;
    }
    assert.equal(actual, substitute(expected, vars, at), at);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${at}: an array`);
    assert.equal(actual.length, expected.length, `${at}: length`);
    expected.forEach((e, i) => contains(actual[i], e, vars, `${at}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${at}: an object`);
    for (const [k, v] of Object.entries(expected)) contains((actual as Record<string, unknown>)[k], v, vars, `${at}.${k}`);
    return;
  }
  assert.equal(actual, expected, at);
}

/** The fresh assertion `{client_assertion}` stands for: Entra's, for the guide's `{client_id}`. */
async function freshAssertion(standIn: EntraStandIn | undefined, vars: Vars, texts: readonly (string | undefined)[], where: string): Promise<void> {
  if (!texts.some((text) => text?.includes('{client_assertion}'))) return;
  assert.ok(standIn, `${where}: {client_assertion} in a guide that names no Entra issuer`);
  vars.client_assertion = await standIn.assertion({ audience: substitute('{client_id}', vars, where) });
}

for (const engine of engines) {
  for (const guide of GUIDES) {
    describe(`docs/integrations/${guide} (${engine.name})`, () => {
      it('replays every request and command the guide shows and gets the answers it shows', async () => {
        const markdown = readFileSync(join(DOCS, guide), 'utf8');
        // Issue 30: an identity provider's credentials belong to a connection, never to a directory user.
        assert.doesNotMatch(markdown, /rollcall user create/, `${guide} creates a directory user for a connection`);
        assert.doesNotMatch(markdown, /rollcall token issue[^\n]*--user-name/, `${guide} issues a token acting as a user`);
        // A guide that tells the operator to show deactivated users is replayed in such a team.
        const visible = /--deactivated-users visible/.test(markdown);
        const t = await createTestApp({ engine: sharedEngine(engine), config: { publicBaseUrl: BASE_URL }, ...(visible ? { deactivatedUsers: 'visible' as const } : {}) });
        const dir = mkdtempSync(join(tmpdir(), 'rollcall-guide-'));
        // Entra, where the guide names it: a stand-in on loopback signing with the app's clock.
        const standIn = markdown.includes(ENTRA_LOGIN) ? await EntraStandIn.start(() => t.clock.now()) : undefined;
        try {
          const client = await registerClient(t, ['https://app.example/callback'], t.team.name);
          const vars: Vars = { client_id: client.id, client_secret: client.secret };
          // A client the guide creates itself replaces this one once its output shows the values.
          const preset = new Set(Object.keys(vars));
          if (!markdown.includes('/oauth/token')) vars.token = t.token;
          if (standIn) Object.assign(vars, { tenant_id: standIn.tenantId, object_id: standIn.objectId });
          const target: CliTarget = { databaseUrl: t.url, publicBaseUrl: BASE_URL, hosts: new Map(standIn ? [[ENTRA_LOGIN, new URL(standIn.issuer).origin]] : []) };
          // The users the guide tells the operator to create exist, as they would.
          for (const match of markdown.matchAll(/rollcall user create --team \S+ --user-name (\S+)/g)) {
            const created = await t.request('POST', '/v2/scim/Users', { userName: match[1] });
            assert.equal(created.statusCode, 201, created.body);
          }
          let pending: { request: Request; where: string } | undefined;
          // What the last commands printed, until the fence after them is seen.
          let printed: string | undefined;
          let replayed = 0;
          for (const fence of fences(markdown)) {
            const where = `${guide}:${fence.line}`;
            const lines = fence.text.split('\n');
            const output = printed;
            printed = undefined;
            const commands = fence.lang === 'sh' ? clientCommands(fence.text) : [];
            const isCurl = fence.lang === 'sh' && lines[0]!.startsWith('curl ');
            const isRequest = fence.lang === 'http' && /^[A-Z]+ \//.test(lines[0]!);
            const isAnswer = fence.lang === 'http' && /^HTTP\/1\.1 \d{3}/.test(lines[0]!);
            if (fence.lang === 'text' && output !== undefined) {
              for (const name of [...preset].filter((n) => fence.text.includes(`{${n}}`))) {
                delete vars[name];
                preset.delete(name);
              }
              matchOutput(output, fence.text, vars, where);
            } else if (commands.length > 0) {
              assert.equal(pending, undefined, `${where}: the request at ${pending?.where} shows no answer`);
              printed = '';
              for (const args of commands) {
                const out = await runRollcall(args, vars, target, where);
                printed += out;
                // The connection's token the guide issues is the one its requests carry.
                if (issuesToken(args) && !markdown.includes('/oauth/token')) vars.token = out.trim();
              }
              replayed++;
            } else if (isCurl || isRequest) {
              assert.equal(pending, undefined, `${where}: the request at ${pending?.where} shows no answer`);
              if (isCurl) pending = { request: curlRequest(fence.text), where };
              else {
                // The path as a reader writes it (spaces and quotes in a filter), before " HTTP/1.1".
                const line = /^([A-Z]+) (.+?)(?: HTTP\/1\.1)?$/.exec(lines[0]!)!;
                pending = { request: { method: line[1]!, path: line[2]!, ...headersAndBody(lines.slice(1)) }, where };
              }
            } else if (isAnswer) {
              assert.ok(pending, `${where}: an answer without a request`);
              const { request } = pending;
              await freshAssertion(standIn, vars, [request.path, request.body, ...Object.values(request.headers)], pending.where);
              const expected: Expected = { status: Number(lines[0]!.split(' ')[1]), ...headersAndBody(lines.slice(1)) };
              const headers = Object.fromEntries(
                Object.entries(request.headers)
                  .filter(([k]) => k !== 'host')
                  .map(([k, v]) => [k, substitute(v, vars, pending!.where)])
                  .map(([k, v]) => [k, v!.startsWith(BASIC_LATER) ? `Basic ${Buffer.from(v!.slice(BASIC_LATER.length)).toString('base64')}` : v]),
              );
              const res = await t.app.inject({
                method: request.method as 'GET',
                url: substitute(request.path, vars, pending.where).replace(/ /g, '%20').replace(/"/g, '%22'),
                headers,
                ...(request.body !== undefined ? { payload: substitute(request.body, vars, pending.where) } : {}),
              });
              assert.equal(res.statusCode, expected.status, `${pending.where}: status; body ${res.body}`);
              if (expected.body !== undefined) contains(JSON.parse(res.body), JSON.parse(expected.body), vars, where);
              else if (expected.status === 204) assert.equal(res.body, '', `${where}: no body`);
              for (const name of ['content-type', 'location', 'etag']) {
                if (expected.headers[name] !== undefined) contains(res.headers[name], expected.headers[name], vars, `${where} ${name}`);
              }
              pending = undefined;
              replayed++;
            } else if (fence.lang === 'ts' && lines[0] === '// rollcall-client.ts') {
              await t.app.listen({ host: '127.0.0.1', port: 0 });
              const port = (t.app.server.address() as AddressInfo).port;
              const file = join(dir, 'rollcall-client.ts');
              writeFileSync(file, fence.text);
              // Asynchronously: the server answering it runs in this process.
              const run = await promisify(execFile)(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, ROLLCALL: `http://127.0.0.1:${port}`, TOKEN: t.token }, timeout: 30_000 });
              assert.match(run.stdout, /^ok: /, `${where}: the client printed ${run.stdout} ${run.stderr}`);
              replayed++;
            }
          }
          assert.equal(pending, undefined, `the request at ${pending?.where} shows no answer`);
          assert.ok(replayed >= 5, `${guide} shows ${replayed} replayable requests`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
          await standIn?.close();
          await t.close();
        }
      });
    });
  }
}
