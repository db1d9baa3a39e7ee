/**
 * The reference server: a bare `node:http` handler answering the routes the throughput
 * benchmark drives, with fixed bodies of the size and shape Rollcall sends (a User, a one-user
 * ListResponse, a Group without members, a token response) and the same status codes and
 * headers. It reads each request body to the end but parses nothing, checks only that an
 * Authorization header is present, and touches no database: what it measures is the floor of
 * HTTP on this machine, against which Rollcall's numbers are read as ratios. Run it as a process
 * of its own (`node bench/reference-server.ts [--port P]`); it prints `{"url": ...}` when ready
 * and stops on SIGTERM.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, LIST_RESPONSE, USER_SCHEMA } from '../src/scim/schema/urns.ts';

const ID = 'REFERENCE0USER000001';
const GROUP_ID = 'REFERENCE0GROUP00001';
const SCIM_JSON = 'application/scim+json';

function sampleUser(base: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
    id: ID,
    externalId: 'readext-0000001',
    userName: 'read0000001@bench.example',
    name: { formatted: 'Grace Hopper', givenName: 'Grace', familyName: 'Hopper' },
    displayName: 'Grace Hopper',
    title: 'Engineer',
    locale: 'en-US',
    active: true,
    emails: [{ value: 'read0000001@bench.example', type: 'work', primary: true }],
    [ENTERPRISE_USER_SCHEMA]: { employeeNumber: '1', department: 'Sales' },
    groups: [],
    meta: {
      resourceType: 'User',
      created: '2026-01-01T00:00:00.000Z',
      lastModified: '2026-01-01T00:00:00.000Z',
      location: `${base}/v2/scim/Users/${ID}`,
      version: 'W/"1"',
    },
  };
}

function sampleGroup(base: string): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: GROUP_ID,
    value: GROUP_ID,
    externalId: null,
    displayName: 'bench group 01',
    display: 'bench group 01',
    active: true,
    meta: {
      resourceType: 'Group',
      created: '2026-01-01T00:00:00.000Z',
      lastModified: '2026-01-01T00:00:00.000Z',
      location: `${base}/v2/scim/Groups/${GROUP_ID}`,
      version: 'W/"1"',
    },
  };
}

const TOKEN_RESPONSE = {
  access_token: `rc_at_${'A'.repeat(43)}`,
  token_type: 'bearer',
  refresh_token: `rc_rt_${'B'.repeat(43)}`,
  Expires_in: '3600',
  expires_in: 3600,
  scope: 'read write',
};

interface FixedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

interface Route {
  readonly method: string;
  readonly path: RegExp;
  readonly bearer: boolean;
  readonly answer: FixedAnswer;
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** The routes and their fixed answers, for a server reachable at `base`. */
export function referenceRoutes(base: string): Route[] {
  const user = json(sampleUser(base));
  const scim = (status: number, body?: Buffer, extra: Record<string, string> = {}): FixedAnswer => ({
    status,
    headers: { 'content-type': SCIM_JSON, etag: 'W/"1"', ...extra },
    ...(body ? { body } : {}),
  });
  const list = json({ schemas: [LIST_RESPONSE], totalResults: 1, startIndex: 1, itemsPerPage: 1, Resources: [sampleUser(base)] });
  const userPath = /^\/v2\/scim\/Users\/[^/?]+(\?|$)/;
  const groupPath = /^\/v2\/scim\/Groups\/[^/?]+(\?|$)/;
  return [
    { method: 'GET', path: userPath, bearer: true, answer: scim(200, user) },
    { method: 'PUT', path: userPath, bearer: true, answer: scim(200, user) },
    { method: 'PATCH', path: userPath, bearer: true, answer: scim(200, user) },
    { method: 'GET', path: /^\/v2\/scim\/Users(\?|$)/, bearer: true, answer: { status: 200, headers: { 'content-type': SCIM_JSON }, body: list } },
    { method: 'POST', path: /^\/v2\/scim\/Users(\?|$)/, bearer: true, answer: scim(201, user, { location: `${base}/v2/scim/Users/${ID}` }) },
    { method: 'GET', path: groupPath, bearer: true, answer: scim(200, json(sampleGroup(base))) },
    { method: 'PATCH', path: groupPath, bearer: true, answer: { status: 204, headers: { etag: 'W/"2"' } } },
    {
      method: 'POST',
      path: /^\/oauth\/token$/,
      bearer: false,
      answer: {
        status: 200,
        headers: { 'content-type': 'application/json;charset=UTF-8', 'cache-control': 'no-store', pragma: 'no-cache' },
        body: json(TOKEN_RESPONSE),
      },
    },
  ];
}

function send(res: ServerResponse, answer: FixedAnswer): void {
  res.writeHead(answer.status, answer.body ? { ...answer.headers, 'content-length': String(answer.body.length) } : answer.headers);
  res.end(answer.body);
}

const UNAUTHORIZED: FixedAnswer = { status: 401, headers: { 'content-type': SCIM_JSON, 'www-authenticate': 'Bearer realm="reference"' }, body: json({ status: '401' }) };
const NOT_FOUND: FixedAnswer = { status: 404, headers: { 'content-type': SCIM_JSON }, body: json({ status: '404' }) };

/** The handler: the first route matching method and path answers, once the body is read. */
export function referenceHandler(base: string): RequestListener {
  const routes = referenceRoutes(base);
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const route = routes.find((r) => r.method === req.method && r.path.test(url));
    req.on('data', () => {});
    req.on('end', () => {
      if (!route) send(res, NOT_FOUND);
      else if (route.bearer && !req.headers.authorization) send(res, UNAUTHORIZED);
      else send(res, route.answer);
    });
  };
}

/** Starts the reference server in this process (tests; the benchmark runs it as a process). */
export async function startReferenceServer(host = '127.0.0.1', port = 0): Promise<{ server: Server; url: string }> {
  const server = createServer({ keepAliveTimeout: 60_000 });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  const url = `http://${host}:${address.port}`;
  server.on('request', referenceHandler(url));
  return { server, url };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } } });
  const { server, url } = await startReferenceServer(values.host, Number(values.port));
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
  process.once('SIGINT', () => server.close(() => process.exit(0)));
}
