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
 *   ROLLCALL and TOKEN set, against a listening Rollcall; it must exit 0.
 * The format is described in docs/integrations/README.md.
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
import { registerClient } from '../support/oauth.ts';

const DOCS = join(import.meta.dirname, '../../docs/integrations');
const BASE_URL = 'https://rollcall.example.com';
const GUIDES = ['entra-id.md', 'okta.md', 'scripts.md'];
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
    const open = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ lang: open[1]!, text: body.join('\n'), line: start + 1 });
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

/** Shell words of one command: quotes and backslash-newlines as sh reads them (no expansion but $VARS). */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  const src = text.replace(/\\\n/g, ' ');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "'") {
      const end = src.indexOf("'", i + 1);
      current += src.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; src[j] !== '"'; j++) current += src[j] === '\\' ? src[++j] : src[j];
      i = j;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  // $ROLLCALL is the base URL; $NAME is the placeholder {name}.
  return words.map((w) => w.replace(/\$ROLLCALL\b/g, BASE_URL).replace(/\$\{?([A-Z][A-Z0-9_]*)\}?/g, (_m, name: string) => `{${name.toLowerCase()}}`));
}

function curlRequest(text: string): Request {
  const words = shellWords(text.split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n'));
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

function substitute(text: string, vars: Record<string, string>, where: string): string {
  return text.replace(/\{([a-z][a-z0-9_]*)\}/g, (_m, name: string) => {
    assert.ok(name in vars, `${where}: {${name}} is used before it is known`);
    return vars[name]!;
  });
}

/** `expected` (with {placeholders}) is contained in `actual`; unknown placeholders are captured. */
function contains(actual: unknown, expected: unknown, vars: Record<string, string>, at: string): void {
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

for (const guide of GUIDES) {
  describe(`docs/integrations/${guide}`, () => {
    it('replays every request the guide shows and gets the answers it shows', async () => {
      const markdown = readFileSync(join(DOCS, guide), 'utf8');
      // A guide that tells the operator to show deactivated users is replayed in such a team.
      const visible = /--deactivated-users visible/.test(markdown);
      const t = await createTestApp({ config: { publicBaseUrl: BASE_URL }, ...(visible ? { deactivatedUsers: 'visible' as const } : {}) });
      const dir = mkdtempSync(join(tmpdir(), 'rollcall-guide-'));
      try {
        const client = await registerClient(t, ['https://app.example/callback'], t.team.name);
        const vars: Record<string, string> = { client_id: client.id, client_secret: client.secret };
        if (!markdown.includes('/oauth/token')) vars.token = t.token;
        // The users the guide tells the operator to create exist, as they would.
        for (const match of markdown.matchAll(/rollcall user create --team \S+ --user-name (\S+)/g)) {
          const created = await t.request('POST', '/v2/scim/Users', { userName: match[1] });
          assert.equal(created.statusCode, 201, created.body);
        }
        let pending: { request: Request; where: string } | undefined;
        let replayed = 0;
        const all = fences(markdown);
        for (const fence of all) {
          const where = `${guide}:${fence.line}`;
          const lines = fence.text.split('\n');
          const isCurl = fence.lang === 'sh' && lines[0]!.startsWith('curl ');
          const isRequest = fence.lang === 'http' && /^[A-Z]+ \//.test(lines[0]!);
          const isAnswer = fence.lang === 'http' && /^HTTP\/1\.1 \d{3}/.test(lines[0]!);
          if (isCurl || isRequest) {
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
        await t.close();
      }
    });
  });
}
