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
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || lower.startsWith('ff');
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
