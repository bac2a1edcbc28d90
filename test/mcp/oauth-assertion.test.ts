/**
 * The private_key_jwt signer McpToolSource's client_credentials grant uses: each algorithm's
 * assertion verifies with the public key by node:crypto, the way an authorization server
 * checks it; a bad algorithm or key is a clear error that never quotes the key.
 */
import { constants, createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { McpConfigError } from '../../src/mcp';
import { ClientAssertionSigner } from '../../src/mcp/client/oauth/assertion';

const pemOf = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('ClientAssertionSigner (private_key_jwt)', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const cases: Array<[string, KeyObject, (data: Buffer, key: KeyObject, signature: Buffer) => boolean]> = [
    ['RS256', rsa, (data, key, signature) => verify('sha256', data, key, signature)],
    [
      'PS256',
      rsa,
      (data, key, signature) =>
        verify('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature),
    ],
    [
      'ES384',
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
      (data, key, signature) => verify('sha384', data, { key, dsaEncoding: 'ieee-p1363' }, signature),
    ],
    ['EdDSA', generateKeyPairSync('ed25519').privateKey, (data, key, signature) => verify(null, data, key, signature)],
  ];

  it.each(cases)('%s: the assertion verifies with the public key and says who, for whom and until when', (alg, key, check) => {
    const signer = new ClientAssertionSigner('remote', 'robot-7', pemOf(key), alg);
    const jwt = signer.assertion('https://auth.example.com', 1_700_000_000);
    const [header, claims, signature] = jwt.split('.') as [string, string, string];
    expect(check(Buffer.from(`${header}.${claims}`), createPublicKey(key), Buffer.from(signature, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg, typ: 'JWT' });
    const body = JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, unknown>;
    expect(body).toMatchObject({ iss: 'robot-7', sub: 'robot-7', aud: 'https://auth.example.com', iat: 1_700_000_000, exp: 1_700_000_300 });
    expect(body.jti).toEqual(expect.any(String));
    expect(signer.assertion('https://auth.example.com', 1_700_000_000)).not.toBe(jwt);
  });

  it('a JWK works as the key; an unknown algorithm or a key that is none is a clear McpConfigError without the key', () => {
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
    expect(new ClientAssertionSigner('remote', 'robot-7', jwk, 'ES256').assertion('https://a.example').split('.')).toHaveLength(3);
    expect(() => new ClientAssertionSigner('remote', 'robot-7', pemOf(rsa), 'HS256')).toThrow(McpConfigError);
    expect(() => new ClientAssertionSigner('remote', 'robot-7', pemOf(rsa), 'HS256')).toThrow(
      'server remote: oauth.algorithm HS256 is not one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA',
    );
    const notAKey = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ1dC1ub3QtYS1rZXk=\n-----END PRIVATE KEY-----';
    const error = (() => {
      try {
        new ClientAssertionSigner('remote', 'robot-7', notAKey, 'RS256');
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(McpConfigError);
    expect(error!.message).toBe('server remote: oauth.privateKey is not a private key (PKCS#8 PEM or JWK)');
    expect(error!.message).not.toContain('c2VjcmV0');
  });
});
