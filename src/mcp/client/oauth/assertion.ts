import { constants, createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import { McpConfigError } from '../errors';

/** JWS algorithms a client assertion may be signed with, and how node:crypto signs each. */
const ALGORITHMS: Record<string, { hash: string | null; pss?: boolean; ec?: boolean }> = {
  RS256: { hash: 'sha256' },
  RS384: { hash: 'sha384' },
  RS512: { hash: 'sha512' },
  PS256: { hash: 'sha256', pss: true },
  PS384: { hash: 'sha384', pss: true },
  PS512: { hash: 'sha512', pss: true },
  ES256: { hash: 'sha256', ec: true },
  ES384: { hash: 'sha384', ec: true },
  ES512: { hash: 'sha512', ec: true },
  EdDSA: { hash: null },
};

/** How long an assertion is good for: five minutes, as the SDK's own signer. */
const LIFETIME_SECONDS = 300;

/**
 * Signs `private_key_jwt` client assertions (RFC 7523 section 2.2) with node:crypto: iss and
 * sub the client, aud the authorization server's issuer (or the token endpoint), a short
 * lifetime and a random jti. The SDK's `createPrivateKeyJwtAuth` does the same through
 * `jose`, an ES module only, which CommonJS cannot load on Node 20 before 20.19 (nor under
 * jest); this one needs nothing beyond Node.
 */
export class ClientAssertionSigner {
  private readonly key: KeyObject;
  private readonly algorithm: { hash: string | null; pss?: boolean; ec?: boolean };

  constructor(
    server: string,
    private readonly clientId: string,
    privateKey: string | Record<string, unknown>,
    private readonly alg: string,
  ) {
    const algorithm = ALGORITHMS[alg];
    if (!algorithm)
      throw new McpConfigError(`server ${server}: oauth.algorithm ${alg.slice(0, 20)} is not one of ${Object.keys(ALGORITHMS).join(', ')}`);
    this.algorithm = algorithm;
    try {
      this.key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : createPrivateKey({ key: privateKey, format: 'jwk' });
    } catch {
      // The key's own text never goes into a message.
      throw new McpConfigError(`server ${server}: oauth.privateKey is not a private key (PKCS#8 PEM or JWK)`);
    }
  }

  /** A fresh assertion for `audience`. */
  assertion(audience: string, now = Math.floor(Date.now() / 1000)): string {
    const header = { alg: this.alg, typ: 'JWT' };
    const claims = { iss: this.clientId, sub: this.clientId, aud: audience, iat: now, exp: now + LIFETIME_SECONDS, jti: randomUUID() };
    const input = `${base64url(header)}.${base64url(claims)}`;
    const { hash, pss, ec } = this.algorithm;
    const signature = sign(hash, Buffer.from(input), {
      key: this.key,
      ...(pss ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : {}),
      ...(ec ? { dsaEncoding: 'ieee-p1363' as const } : {}),
    });
    return `${input}.${signature.toString('base64url')}`;
  }
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
