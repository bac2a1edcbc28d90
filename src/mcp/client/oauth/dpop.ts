import { createHash, webcrypto } from 'node:crypto';
import { DpopSession, generateDpopKeyPair, type DpopKeyPair } from '@modelcontextprotocol/client';
import { McpConfigError } from '../errors';
import type { SecretRedactor } from '../redactor';
import type { McpDpopAlgorithm, McpOAuthStore } from './store';

/** How Web Crypto imports a private JWK for each JWS algorithm a DPoP proof may be signed with. */
const IMPORT: Record<McpDpopAlgorithm, webcrypto.AlgorithmIdentifier | webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams> = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  ES384: { name: 'ECDSA', namedCurve: 'P-384' },
  ES512: { name: 'ECDSA', namedCurve: 'P-521' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
  RS512: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256' },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384' },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512' },
  EdDSA: { name: 'Ed25519' },
};

/** The public members of a JWK per key type: the public key, and its RFC 7638 thumbprint's input. */
const PUBLIC: Record<string, string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };
/** The private members, told to the mask: a stored key must never reach a message. */
const PRIVATE = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

/** Whether `alg` is one a DPoP proof may be signed with (RFC 9449: asymmetric, never `none`). */
export function isDpopAlgorithm(alg: unknown): alg is McpDpopAlgorithm {
  return typeof alg === 'string' && Object.hasOwn(IMPORT, alg);
}

/**
 * One server's DPoP key (RFC 9449), as the SDK's `DpopSession` that signs the proofs: its
 * token requests' and every request that presents a DPoP-bound token. The key is kept in the
 * host's OAuth store (record `dpop`, its private JWK) beside the tokens bound to it, so a
 * restarted process presents them with the key they were bound to; it is made on first use.
 * The nonces a server hands out live in the session, for this process.
 */
export class DpopKeys {
  private session: Promise<DpopSession> | undefined;

  constructor(
    private readonly server: string,
    private readonly store: McpOAuthStore,
    private readonly alg: McpDpopAlgorithm,
    private readonly redactor: SecretRedactor,
  ) {
    if (!isDpopAlgorithm(alg))
      throw new McpConfigError(`server ${server}: oauth.dpop.alg must be one of ${Object.keys(IMPORT).join(', ')}`);
  }

  /** The session: the kept key, or a new one kept from now on. A failure is not kept: the next call tries again. */
  current(): Promise<DpopSession> {
    this.session ??= this.load().catch((error: unknown) => {
      this.session = undefined;
      throw error;
    });
    return this.session;
  }

  /** Forgets the key (the host's store forgot every credential of the server): the next proof is signed by a new one. */
  async forget(): Promise<void> {
    this.session = undefined;
    await this.store.set(this.server, 'dpop', undefined);
  }

  private async load(): Promise<DpopSession> {
    const kept = await this.store.get(this.server, 'dpop');
    if (typeof kept === 'object' && kept.alg === this.alg && typeof kept.jwk === 'object' && kept.jwk !== null) {
      const jwk = kept.jwk as webcrypto.JsonWebKey;
      this.conceal(jwk);
      const keyPair = await this.imported(jwk).catch(() => undefined);
      // A kept key that no longer imports (edited, another algorithm) is replaced; tokens bound to it then fail and are asked anew.
      if (keyPair) return DpopSession.create({ keyPair });
    }
    const keyPair = await generateDpopKeyPair({ alg: this.alg, extractable: true });
    const jwk = await webcrypto.subtle.exportKey('jwk', keyPair.privateKey);
    this.conceal(jwk);
    await this.store.set(this.server, 'dpop', { alg: this.alg, jwk: jwk });
    return DpopSession.create({ keyPair });
  }

  private async imported(jwk: webcrypto.JsonWebKey): Promise<DpopKeyPair> {
    const members = PUBLIC[String(jwk.kty)];
    if (!members) throw new Error('not a key type DPoP signs with');
    const publicJwk = Object.fromEntries(members.map((member) => [member, (jwk as Record<string, unknown>)[member]]));
    const params = IMPORT[this.alg];
    const privateKey = await webcrypto.subtle.importKey('jwk', { ...jwk, key_ops: ['sign'] }, params, false, ['sign']);
    const publicKey = await webcrypto.subtle.importKey('jwk', { ...publicJwk, key_ops: ['verify'] }, params, true, ['verify']);
    // RFC 7638: the required members in lexical order, no whitespace, SHA-256, base64url.
    const thumbprint = createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url');
    return { privateKey, publicKey, publicJwk, thumbprint, alg: this.alg };
  }

  private conceal(jwk: webcrypto.JsonWebKey): void {
    this.redactor.add(
      PRIVATE.map((member) => (jwk as Record<string, unknown>)[member]).filter((value): value is string => typeof value === 'string'),
    );
  }
}
