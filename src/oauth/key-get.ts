/**
 * One GET of a JSON document published by a key source (an OpenID configuration, a JWK Set),
 * under the rules for reaching a host a team or an external issuer names: `https`, or plain
 * `http` to a loopback host only (as redirect URIs, oauth/clients.ts); the host resolved and
 * every address checked by the egress policy (events/receivers.ts: no loopback, private,
 * link-local or metadata address unless the operator allows it), and the socket handed exactly
 * those addresses (`pinnedLookup`), so the address connected is the address checked; a fresh
 * connection per GET (no pooled socket chosen by an earlier resolution); no redirect followed (a
 * 3xx fails); the body read up to a byte limit and the connection dropped the moment it is
 * exceeded; everything bounded by the caller's signal (its deadline). It owns no cache (key-fetch.ts).
 */
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { pinnedLookup, ReceiverRefused, until } from '../events/receivers.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';
import { KeyFetchFailed } from './remote-keys.ts';

/** A document fetched: its parsed JSON and the freshness its publisher asked for. */
export interface Fetched {
  readonly body: unknown;
  /** `Cache-Control: max-age` in seconds, or undefined when absent or `no-store`/`no-cache`. */
  readonly maxAgeSeconds: number | undefined;
}

const unbracket = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/** The URL to fetch `raw` from, or KeyFetchFailed when its shape is refused (before any lookup). */
export function keyUrl(raw: string, policy: ReceiverPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new KeyFetchFailed(`"${raw}" is not an absolute URL`);
  }
  if (url.username || url.password) throw new KeyFetchFailed(`${url.origin}: a key URL must not carry credentials`);
  if (url.protocol === 'https:') return url;
  const host = unbracket(url.hostname);
  const loopback = host === 'localhost' || (isIP(host) !== 0 && policy.forbiddenClass(host) === 'loopback');
  if (url.protocol === 'http:' && loopback) return url;
  throw new KeyFetchFailed(`${url.origin}: keys are fetched over https only (plain http only from a loopback host)`);
}

/**
 * `max-age` of a Cache-Control header; undefined when the publisher asks not to store or to
 * revalidate (the fetcher then keeps the set for its shortest time) or says nothing.
 */
export function maxAgeOf(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const directives = header.toLowerCase().split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return undefined;
  for (const d of directives) {
    const m = /^max-age\s*=\s*"?(\d{1,10})"?$/.exec(d);
    if (m) return Number(m[1]);
  }
  return undefined;
}


/** What the operator's log says of a refused address (the policy's own text speaks of receivers). */
function refusal(url: URL, error: ReceiverRefused): KeyFetchFailed {
  if (error.category === 'dns') return new KeyFetchFailed(`${url.host}: does not resolve`);
  return new KeyFetchFailed(`${url.host}: refused by the egress policy (${error.message})`);
}

/**
 * GETs `url` and parses its JSON. Rejects with KeyFetchFailed for a refused address, a network
 * error, an answer other than 200 (a redirect is never followed), a body over `maxBytes`, a body
 * that is not JSON, or when `signal` aborts (its reason, a KeyFetchFailed, is the rejection).
 */
export async function getJson(url: URL, policy: ReceiverPolicy, signal: AbortSignal, maxBytes: number): Promise<Fetched> {
  let addresses;
  try {
    addresses = await until(policy.vetted(url), signal);
  } catch (error) {
    if (error instanceof ReceiverRefused) throw refusal(url, error);
    throw error instanceof KeyFetchFailed ? error : new KeyFetchFailed(`${url.host}: ${String(error)}`);
  }
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const options = { method: 'GET', headers: { accept: 'application/json, application/jwk-set+json' }, signal, lookup: pinnedLookup(addresses), agent: false as const };
    const req = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
    req.once('error', (error) => reject(signal.aborted ? signal.reason : new KeyFetchFailed(`${url.host}: ${networkReason(error)}`)));
    req.once('response', resolve);
    req.end();
  });
  const status = response.statusCode ?? 0;
  if (status !== 200) {
    response.destroy();
    const why = status >= 300 && status < 400 ? `answered ${status} (a redirect, never followed)` : `answered ${status}`;
    throw new KeyFetchFailed(`${url.origin}${url.pathname} ${why}`);
  }
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw new KeyFetchFailed(`${url.origin}${url.pathname} declares ${declared} bytes, over the ${maxBytes}-byte limit`);
  }
  const text = await readBounded(response, url, signal, maxBytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new KeyFetchFailed(`${url.origin}${url.pathname} did not answer JSON`);
  }
  const cacheControl = response.headers['cache-control'];
  return { body, maxAgeSeconds: maxAgeOf(Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl) };
}

/** The body as text, or a rejection the moment it grows past `maxBytes` (the connection is dropped then). */
function readBounded(response: IncomingMessage, url: URL, signal: AbortSignal, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      response.destroy();
      reject(error);
    };
    response.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) fail(new KeyFetchFailed(`${url.origin}${url.pathname} answered more than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    response.once('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    response.once('error', (error) => fail(signal.aborted ? signal.reason : new KeyFetchFailed(`${url.host}: ${networkReason(error)}`)));
    response.once('close', () => fail(signal.aborted ? signal.reason : new KeyFetchFailed(`${url.host}: the connection closed before the answer ended`)));
  });
}

/** A network error's code (ECONNREFUSED, a TLS failure), never its text. */
function networkReason(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `network error ${code}` : 'network error';
}
