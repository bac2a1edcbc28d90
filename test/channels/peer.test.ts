/**
 * The Chat SDK and its adapters are optional peers of `toolnexus-ts/channels`, loaded with
 * `import()` when `createChannels` is called: one not installed is a `MissingPeerError` naming
 * the install command, and options that name no platform are refused before anything loads.
 */
import { InvalidArgumentError, MissingPeerError, Toolkit } from 'toolnexus-ts';
import { createChannels } from 'toolnexus-ts/channels';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { loadChannelPeer } from '../../src/channels/peer';

it('a peer that is not installed is a MissingPeerError naming the install command', async () => {
  const missing = loadChannelPeer('@chat-adapter/discord');
  await expect(missing).rejects.toThrow(MissingPeerError);
  await expect(loadChannelPeer('@chat-adapter/discord')).rejects.toThrow(
    /toolnexus-ts\/channels needs the package "@chat-adapter\/discord".*npm install chat @chat-adapter\/slack/,
  );
});

it("e-mail's peer, nodemailer, names its own install command", async () => {
  await expect(loadChannelPeer('nodemailer-not-installed', 'npm install nodemailer')).rejects.toThrow(
    /needs the package "nodemailer-not-installed".*run `npm install nodemailer`/,
  );
});

it('refuses options without a platform, an unknown platform, or without principalOf and route', async () => {
  const host = new ResumeCoordinator({ toolkit: new Toolkit() });
  const base = { host, principalOf: () => undefined, route: () => [] };
  await expect(createChannels({ ...base, platforms: {} })).rejects.toThrow(InvalidArgumentError);
  await expect(createChannels({ ...base, platforms: { discord: {} } as never })).rejects.toThrow('unknown platform discord');
  await expect(createChannels({ host, platforms: { slack: {} } } as never)).rejects.toThrow('principalOf(user) and route(call)');
});
