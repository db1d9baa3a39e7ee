/**
 * Where push delivery may connect. A receiver URL is chosen by a team, and
 * Rollcall POSTs to it from inside the operator's network: without rules a team could make it
 * reach the cloud's metadata service (169.254.169.254), private ranges, or local ports, and read
 * what answers. So a receiver is refused when its host is, or resolves to, an address that is
 * loopback, link-local, private (RFC 1918, shared 100.64/10), unique-local, site-local,
 * unspecified, multicast or reserved, IPv4 embedded in IPv6 (mapped, NAT64, 6to4) judged as the
 * IPv4 address it carries, unless the operator allows it (ALLOW_RECEIVERS, config.ts: tests,
 * receivers on the operator's own network). Every address a name resolves to is judged, and
 * one forbidden refuses the receiver.
 *
 * A subscription is judged when it is created (a 400 then) and again before every connection:
 * `vetted` resolves the host and checks every address, and `pinnedLookup` hands exactly those
 * addresses to the socket, so the address connected is the address checked (a name that
 * resolves elsewhere between the check and the connection, DNS rebinding, cannot slip through).
 * TLS still verifies the certificate against the URL's host. A name that does not resolve when
 * the subscription is created is accepted: it is judged when delivery connects.
 *
 * It owns no HTTP and no SQL.
 */
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { lookup as systemLookup } from 'node:dns/promises';
import type { AllowedReceiver } from '../config.ts';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every address a host name resolves to (a test injects its own). */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const resolveSystem: Resolve = async (hostname) =>
  (await systemLookup(hostname, { all: true, order: 'verbatim' })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** How long a name may take to resolve before the receiver counts as not resolving. */
export const RESOLVE_TIMEOUT_MS = 5_000;

/** A receiver delivery must not connect to: its category is all the attempt log keeps. */
export class ReceiverRefused extends Error {
  readonly category: 'forbidden-address' | 'dns';
  constructor(category: 'forbidden-address' | 'dns', message: string) {
    super(message);
    this.name = 'ReceiverRefused';
    this.category = category;
  }
}

type AddressClass = 'loopback' | 'link-local' | 'private' | 'unique-local' | 'site-local' | 'unspecified' | 'multicast' | 'reserved';

/** The ranges no receiver may be on unless allowed, by class (most specific first). */
const FORBIDDEN: readonly (readonly [string, number, 'ipv4' | 'ipv6', AddressClass])[] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // IPv4-compatible (deprecated), NAT64 for local use, Teredo, discard-only.
  ['::', 96, 'ipv6', 'reserved'],
  ['64:ff9b:1::', 48, 'ipv6', 'private'],
  ['2001::', 32, 'ipv6', 'reserved'],
  ['100::', 64, 'ipv6', 'reserved'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

/** The eight 16-bit groups of an IPv6 address (zone id dropped, a dotted IPv4 tail folded in). */
function groupsOf(v6: string): number[] {
  let text = v6.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const first = head === '' ? [] : head.split(':');
  const last = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - first.length - last.length;
  return [...first, ...Array<string>(fill).fill('0'), ...last].map((g) => parseInt(g, 16));
}

const ipv4Of = (high: number, low: number): string => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** The IPv4 address an IPv6 one carries and would reach: mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16). */
function embeddedIPv4(v6: string): string | undefined {
  const g = groupsOf(v6);
  if (g.length !== 8) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  return undefined;
}

const unbracket = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

const LOOPBACK_NAMES = new Set(['localhost']);

/** The port a URL connects to. */
const portOf = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

export class ReceiverPolicy {
  readonly #forbidden: readonly (readonly [BlockList, AddressClass])[];
  readonly #allowed: readonly { readonly list: BlockList | undefined; readonly name: string | undefined; readonly port: number | undefined }[];
  readonly #resolve: Resolve;

  constructor(allowed: readonly AllowedReceiver[] = [], resolve: Resolve = resolveSystem) {
    this.#forbidden = FORBIDDEN.map(([network, prefix, type, kind]) => {
      const list = new BlockList();
      list.addSubnet(network, prefix, type);
      return [list, kind] as const;
    });
    this.#allowed = allowed.map((entry) => {
      if (entry.kind === 'name') return { list: undefined, name: entry.name, port: entry.port };
      const list = new BlockList();
      list.addSubnet(entry.address, entry.prefix, entry.family === 4 ? 'ipv4' : 'ipv6');
      return { list, name: undefined, port: entry.port };
    });
    this.#resolve = resolve;
  }

  /** Why no receiver may be on `address` (its class), or undefined when it is an ordinary public address. */
  forbiddenClass(address: string): AddressClass | undefined {
    const family = isIP(address);
    if (family === 6) {
      const v4 = embeddedIPv4(address);
      if (v4 !== undefined) return this.forbiddenClass(v4);
    }
    if (family === 0) return 'reserved';
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return this.#forbidden.find(([list]) => list.check(address, type))?.[1];
  }

  #allows(hostname: string, address: string, port: number): boolean {
    const family = isIP(address);
    return this.#allowed.some(
      (entry) =>
        (entry.port === undefined || entry.port === port) &&
        (entry.name !== undefined ? entry.name === hostname : family !== 0 && entry.list!.check(address, family === 4 ? 'ipv4' : 'ipv6')),
    );
  }

  /**
   * The URL's shape: https, or plain http to a loopback host (tests, local development: SETs
   * and the changes they describe never cross a network in the clear); no credentials, no
   * fragment. Says nothing of addresses (`vetted` does).
   */
  shapeProblem(raw: string): string | undefined {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return `"${raw}" is not an absolute URL`;
    }
    if (url.username || url.password) return 'the receiver URL must not carry credentials';
    if (url.hash) return 'the receiver URL must not carry a fragment';
    if (url.protocol === 'https:') return undefined;
    const host = unbracket(url.hostname);
    if (url.protocol === 'http:' && (LOOPBACK_NAMES.has(host) || (isIP(host) !== 0 && this.forbiddenClass(host) === 'loopback'))) return undefined;
    return 'the receiver must be https (plain http only on a loopback address, for tests and local development)';
  }

  /**
   * The addresses a delivery to `url` may connect to: the host's own (a literal address) or
   * every one its name resolves to now, each checked. Throws ReceiverRefused: `dns` when the
   * name does not resolve, `forbidden-address` when one address is refused (or plain http
   * would leave loopback).
   */
  async vetted(url: URL): Promise<ResolvedAddress[]> {
    const host = unbracket(url.hostname).toLowerCase().replace(/\.$/, '');
    const literal = isIP(host);
    const addresses: readonly ResolvedAddress[] = literal !== 0 ? [{ address: host, family: literal === 6 ? 6 : 4 }] : await this.#resolveBounded(host);
    if (addresses.length === 0) throw new ReceiverRefused('dns', `${host} resolves to no address`);
    const port = portOf(url);
    for (const { address } of addresses) {
      const kind = this.forbiddenClass(address);
      if (url.protocol === 'http:' && kind !== 'loopback') throw new ReceiverRefused('forbidden-address', `plain http must stay on loopback; ${literal ? host : `${host} resolves to`} an address that is not`);
      if (kind !== undefined && !this.#allows(host, address, port)) {
        throw new ReceiverRefused('forbidden-address', `${literal ? `${host} is` : `${host} resolves to`} ${kind === 'unspecified' ? 'an' : 'a'} ${kind} address: receivers on loopback, link-local, private, unique-local, unspecified and other non-public addresses are refused unless the operator allows them (ALLOW_RECEIVERS)`);
      }
    }
    return [...addresses];
  }

  async #resolveBounded(host: string): Promise<readonly ResolvedAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReceiverRefused('dns', `${host} did not resolve in time`)), RESOLVE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.#resolve(host), late]);
    } catch (error) {
      if (error instanceof ReceiverRefused) throw error;
      throw new ReceiverRefused('dns', `${host} does not resolve`);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Why `raw` cannot be a receiver, as a subscription's creation judges it: its shape, then its
   * addresses. A name that does not resolve now is accepted (delivery judges it on connecting).
   */
  async problem(raw: string): Promise<string | undefined> {
    const shape = this.shapeProblem(raw);
    if (shape !== undefined) return shape;
    try {
      await this.vetted(new URL(raw));
      return undefined;
    } catch (error) {
      if (error instanceof ReceiverRefused && error.category === 'dns') return undefined;
      if (error instanceof ReceiverRefused) return error.message;
      throw error;
    }
  }
}

/**
 * A lookup for node:net that answers only `addresses` (checked by `vetted`), never asking DNS
 * again: the connection goes to an address that was checked. Honours the family asked for and
 * `all` (Node's happy eyeballs asks for every address).
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (wanted.length === 0) {
      callback(Object.assign(new Error(`${hostname} has no checked address of family ${String(options.family)}`), { code: 'ENOTFOUND' }), '', 4);
      return;
    }
    if (options.all) (callback as unknown as (error: null, all: ResolvedAddress[]) => void)(null, [...wanted]);
    else callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}

/** `work`, or a rejection as soon as `signal` aborts (a name that takes long to resolve). */
export function until<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
