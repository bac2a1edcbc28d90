/**
 * The DPoP key of a remote server (src/mcp/client/oauth/dpop.ts): made on first use for each
 * algorithm a proof may be signed with, kept in the OAuth store as a private JWK, and taken
 * again from there by a new process (the same thumbprint, so tokens bound to it stay usable);
 * every proof signed by it verifies with the public key in its header; its private members
 * are redacted.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { McpConfigError, MemoryOAuthStore, type McpDpopAlgorithm } from '../../src/mcp';
import { DpopKeys } from '../../src/mcp/client/oauth/dpop';
import { SecretRedactor } from '../../src/mcp/client/redactor';

const parse = (part: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

/** How node:crypto verifies each algorithm's JWS signature. */
const VERIFY: Record<string, { hash: string | null; options: Record<string, unknown> }> = {
  ES256: { hash: 'sha256', options: { dsaEncoding: 'ieee-p1363' } },
  EdDSA: { hash: null, options: {} },
  RS256: { hash: 'sha256', options: {} },
  PS384: { hash: 'sha384', options: { padding: 6, saltLength: 48 } },
};

describe('DpopKeys: a DPoP key per server, kept in the OAuth store', () => {
  it.each(['ES256', 'EdDSA', 'RS256', 'PS384'] as McpDpopAlgorithm[])(
    '%s: made once, kept, taken again by a new process with the same thumbprint; its proofs verify; its private key is redacted',
    async (alg) => {
      const store = new MemoryOAuthStore();
      const first = await new DpopKeys('ledger', store, alg, new SecretRedactor([])).current();
      const kept = store.get('ledger', 'dpop') as { alg: string; jwk: Record<string, unknown> };
      expect(kept.alg).toBe(alg);
      expect(typeof kept.jwk.d).toBe('string');

      const redactor = new SecretRedactor([]);
      const again = await new DpopKeys('ledger', store, alg, redactor).current();
      expect(again.thumbprint).toBe(first.thumbprint);
      expect(redactor.text(`key ${String(kept.jwk.d)}`)).toBe('key ***');

      const proof = await again.buildProof({ htm: 'post', htu: 'https://ledger.example.com/mcp?x=1', accessToken: 'at-1' });
      const [header, claims, signature] = proof.split('.') as [string, string, string];
      const { jwk, typ, alg: signedWith } = parse(header) as { jwk: Record<string, unknown>; typ: string; alg: string };
      expect({ typ, signedWith, hasPrivate: 'd' in jwk }).toEqual({ typ: 'dpop+jwt', signedWith: alg, hasPrivate: false });
      const { hash, options } = VERIFY[alg]!;
      const key = createPublicKey({ key: jwk as never, format: 'jwk' });
      expect(verify(hash, Buffer.from(`${header}.${claims}`), { key, ...options }, Buffer.from(signature, 'base64url'))).toBe(true);
      expect(parse(claims)).toMatchObject({
        htm: 'POST',
        htu: 'https://ledger.example.com/mcp',
        ath: createHash('sha256').update('at-1').digest('base64url'),
      });
    },
  );

  it('replaces a kept key of another algorithm, and refuses an algorithm DPoP does not sign with', async () => {
    const store = new MemoryOAuthStore();
    const es = await new DpopKeys('ledger', store, 'ES256', new SecretRedactor([])).current();
    const ed = await new DpopKeys('ledger', store, 'EdDSA', new SecretRedactor([])).current();
    expect(ed.thumbprint).not.toBe(es.thumbprint);
    expect((store.get('ledger', 'dpop') as { alg: string }).alg).toBe('EdDSA');
    expect(() => new DpopKeys('ledger', store, 'HS256' as McpDpopAlgorithm, new SecretRedactor([]))).toThrow(McpConfigError);
  });
});
