// Part of the consumer test (scripts/consumer-test.js calls it with the packed tarball):
// 1. Peers at their latest: a fresh app installs the tarball with the latest release of every
//    optional peer, `npm install <tgz> <peer>@latest …`; an ERESOLVE or any peer warning in npm's
//    output fails it, so a peer range that shuts out a current release is caught the day it ships.
// 2. Nest 11 and the current Nest: one fresh app per major installs the tarball with
//    @nestjs/core@11 (and @latest), then boots the docs' Nest set-up (ToolnexusModule with the
//    inbox and the chat handler, docs/dependency-injection.md, operating.md, chat.md) under
//    `NestFactory.create(AppModule)` defaults and asks it over HTTP on 127.0.0.1.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// --ignore-scripts: these apps check what npm resolves and what Node loads; better-sqlite3's
// compile is not part of either (the consumer test's other apps load a built addon).
const INSTALL = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=warn'];

/** npm output lines that say a peer is not satisfied (or nearly so). */
const PEER_TROUBLE = /ERESOLVE|peer dep|peerDependenc|conflicting peer|Could not resolve dependency|overriding peer|invalid: /i;

/** The optional peers of package.json, each at `@latest`. */
function latestPeers(repo) {
  const { peerDependencies } = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
  return Object.keys(peerDependencies).map((name) => `${name}@latest`);
}

/** npm install whose combined output must hold no peer warning; npm ls must then be clean too. */
async function installCleanly(run, dir, specs) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: path.basename(dir), private: true, version: '1.0.0' })}\n`);
  const output = await run('sh', ['-c', `${NPM} ${[...INSTALL, ...specs].map((s) => `'${s}'`).join(' ')} 2>&1`], dir);
  const trouble = output.split('\n').filter((line) => PEER_TROUBLE.test(line));
  if (trouble.length > 0)
    throw new Error(`consumer test: npm install ${specs.join(' ')} in ${dir} warned about peers:\n${trouble.join('\n')}`);
  // npm ls exits non-zero on an invalid or missing non-optional dependency, peers included.
  await run(NPM, ['ls', '--all', '--loglevel=error'], dir);
}

// The docs' Nest set-up in plain CommonJS (decorators applied as functions: no compiler here,
// the consumer test's other apps compile TypeScript). A scripted model answers "You said: …".
const NEST_APP = `
'use strict';
require('reflect-metadata');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FunctionModel } = require('toolnexus-ts/models');
const { MemoryStore } = require('toolnexus-ts/memory');
const { bearerToken } = require('toolnexus-ts/inbox');
const { ToolnexusModule, ToolnexusInboxModule, ToolnexusChatModule } = require('toolnexus-ts/nest');

const model = new FunctionModel(({ messages }) => 'You said: ' + messages[messages.length - 1].content);
const store = new MemoryStore();
class AppModule {}
Module({
  imports: [
    ToolnexusModule.forRoot({ model, store }),
    ToolnexusInboxModule.forRoot({ path: 'inbox', authorize: bearerToken('inbox-token-0123456789', { id: 'ops', name: 'Operations' }) }),
    ToolnexusChatModule.forRoot({ principal: (req) => (typeof req.headers['x-user'] === 'string' ? { id: req.headers['x-user'] } : undefined) }),
  ],
})(AppModule);

function check(ok, what) {
  if (!ok) throw new Error('nest app: ' + what);
}

async function main() {
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  try {
    const me = await fetch(base + '/inbox/api/me', { headers: { authorization: 'Bearer inbox-token-0123456789' } });
    check(me.status === 200, 'GET /inbox/api/me with the token is ' + me.status);
    check((await me.json()).principal.id === 'ops', 'the inbox knows the token holder');
    check((await fetch(base + '/inbox/api/me')).status === 401, 'the inbox refuses a request without the token');
    const chat = await fetch(base + '/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'ada' },
      body: JSON.stringify({ id: 'c1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }], trigger: 'submit-message' }),
    });
    const stream = await chat.text();
    check(chat.status === 200 && stream.includes('You said: hello'), 'POST /api/chat streams the answer (' + chat.status + '): ' + stream.slice(0, 300));
    const thread = await fetch(base + '/api/chat?id=c1', { headers: { 'x-user': 'ada' } });
    check(thread.status === 200 && (await thread.json()).length === 2, 'GET /api/chat?id=c1 gives the stored thread back');
    const version = require('@nestjs/core/package.json').version;
    console.log('Nest ' + version + ' on Node ' + process.versions.node + ': inbox and chat answered over HTTP');
  } finally {
    await app.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/**
 * Runs both checks in `tmp` (the consumer test's scratch folder). `run(cmd, args, cwd, { show })`
 * is the consumer test's runner; `timed(label, work)` records a timing.
 */
async function checkPeersAndNest({ repo, tarball, tmp, run, timed }) {
  const peers = latestPeers(repo);
  await timed(`peers at @latest: npm install <tgz> ${peers.length} peers`, () =>
    installCleanly(run, path.join(tmp, 'peers-latest'), [tarball, ...peers]),
  );
  console.log(`   every optional peer at its latest release installs beside the package with no peer warning: ${peers.join(' ')}`);
  await Promise.all(
    ['11', 'latest'].map(async (nest) => {
      const dir = path.join(tmp, `nest-${nest}`);
      const specs = [
        tarball,
        ...['core', 'common', 'platform-express'].map((p) => `@nestjs/${p}@${nest}`),
        'rxjs',
        'reflect-metadata',
        'class-validator',
        'class-transformer',
      ];
      await timed(`nest ${nest}: npm install`, () => installCleanly(run, dir, specs));
      fs.writeFileSync(path.join(dir, 'main.js'), NEST_APP);
      await timed(`nest ${nest}: NestFactory.create(AppModule), inbox and chat over HTTP`, () =>
        run(process.execPath, ['main.js'], dir, { show: true }),
      );
    }),
  );
}

module.exports = { checkPeersAndNest };
