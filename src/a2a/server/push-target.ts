import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { A2ARequestError } from './errors';

/**
 * Whether `address` (an IPv4 or IPv6 literal) is one a push notification must not reach unless
 * the host allows it (docs/a2a.md, "Listing and push"): loopback, private (RFC 1918, IPv6 unique
 * local), link-local (cloud metadata at 169.254.169.254 among them), carrier-grade NAT, the
 * unspecified address, multicast and reserved ranges, and IPv4 mapped into IPv6 as any of those.
 */
export function isPrivateAddress(address: string): boolean {
  const kind = isIP(address);
  if (kind === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (kind !== 6) return true;
  const groups = ipv6Groups(address);
  // An IPv4 address inside IPv6 (mapped `::ffff:a.b.c.d`, in any spelling, or NAT64 `64:ff9b::/96`) is judged as that address.
  const embedded =
    groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff
      ? groups
      : groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)
        ? groups
        : undefined;
  if (embedded) {
    const [high, low] = [embedded[6] as number, embedded[7] as number];
    return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  const first = groups[0] as number;
  const unspecifiedOrLoopback = groups.slice(0, 7).every((group) => group === 0) && (groups[7] === 0 || groups[7] === 1);
  return unspecifiedOrLoopback || (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** The eight 16-bit groups of an IPv6 literal (`::` expanded, a dotted IPv4 tail read as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0] as string;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/** A `lookup` for node:http that refuses to connect to a private address (a name that resolves to one, at connect time: no DNS rebinding). */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = allowPrivate ? undefined : addresses.find((entry) => isPrivateAddress(entry.address));
      if (refused) return callback(new Error(`${hostname} resolves to a private address`), '', 0);
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks a client's push URL before it is stored: `http:` or `https:`, no credentials in it,
 * and (unless `allowPrivate`) a host that is no private address and resolves to none.
 * @throws {@link A2ARequestError} `bad_push_url`, saying why.
 */
export async function checkPushUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new A2ARequestError('bad_push_url', 'the push notification URL is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new A2ARequestError('bad_push_url', 'a push notification URL is http: or https:');
  if (url.username !== '' || url.password !== '')
    throw new A2ARequestError('bad_push_url', 'a push notification URL carries no credentials');
  if (raw.length > 2048) throw new A2ARequestError('bad_push_url', 'a push notification URL is at most 2048 characters');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveAll(host);
  if (addresses.length === 0 || addresses.some(isPrivateAddress))
    throw new A2ARequestError('bad_push_url', `push notifications are not sent to ${host}: a private, loopback or link-local address`);
  return url;
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve) =>
    dnsLookup(host, { all: true }, (error, found) => resolve(error ? [] : found.map((entry) => entry.address))),
  );
}

/** What one push notification attempt sends. */
export interface PushPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * POSTs one notification: no redirect is followed, the target is checked again as it is
 * connected to, at most `timeoutMs`, and the answer's body is not read (only its status).
 * Resolves with the HTTP status; rejects on a network error, a refused target or the timeout.
 */
export function postNotification(post: PushPost): Promise<number> {
  const url = new URL(post.url);
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...post.headers, 'content-length': String(Buffer.byteLength(post.body)) },
    lookup: guardedLookup(post.allowPrivate),
    timeout: post.timeoutMs,
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, options, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${post.timeoutMs} ms`)));
    request.on('error', reject);
    request.end(post.body);
  });
}
