/**
 * The push notification guard (issue 49, docs/a2a.md "Listing and push"): which addresses a
 * notification may not reach unless the agent allows private targets, and a URL refused before
 * it is stored. No network: literals only (a name is resolved as it is checked, then again at connect time).
 */
import { checkPushUrl, isPrivateAddress } from '../../src/a2a/server/push-target';

it('knows loopback, private, link-local, CGNAT, reserved and mapped addresses from public ones', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '0:0:0:0:0:0:0:1',
    'not an address',
  ])
    expect([address, isPrivateAddress(address)]).toEqual([address, true]);
  for (const address of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8'])
    expect([address, isPrivateAddress(address)]).toEqual([address, false]);
});

it('refuses a URL that is not http(s), carries credentials, or names a private address; allows it when told to', async () => {
  await expect(checkPushUrl('file:///etc/passwd', false)).rejects.toMatchObject({ reason: 'bad_push_url' });
  await expect(checkPushUrl('https://user:pw@93.184.216.34/hook', false)).rejects.toMatchObject({ reason: 'bad_push_url' });
  await expect(checkPushUrl('not a url', false)).rejects.toMatchObject({ reason: 'bad_push_url' });
  await expect(checkPushUrl('http://169.254.169.254/latest/meta-data', false)).rejects.toThrow(/private, loopback or link-local/);
  await expect(checkPushUrl('http://[::ffff:127.0.0.1]:8080/hook', false)).rejects.toThrow(/private/);
  await expect(checkPushUrl('https://93.184.216.34/hook', false)).resolves.toBeInstanceOf(URL);
  await expect(checkPushUrl('http://127.0.0.1:9/hook', true)).resolves.toBeInstanceOf(URL);
});
