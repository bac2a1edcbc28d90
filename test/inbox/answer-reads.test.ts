/**
 * The inbox reads a call once on the way of its answer (docs/design.md, "The path of an
 * answer", step 0): it reads it to refuse early what can no longer be answered, and passes that
 * read to `answerAs`, so nothing reads it again before the claim. Over real HTTP on 127.0.0.1.
 */
import { createServer } from 'node:http';
import { Toolkit, defineTool, pending, pendingOf, type Answer } from 'toolnexus-ts';
import { ResumeCoordinator, type Audit, type SuspendedCall } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { listening } from '../fixtures/listen';

const TOKEN = 'alice-token-0123456789abcdef';

/** A memory store that logs its reads and claims, in order. */
class LoggedStore extends MemoryStore {
  readonly log: string[] = [];

  override async get(id: string): Promise<SuspendedCall | undefined> {
    this.log.push('get');
    return super.get(id);
  }

  override async claim(...args: [string, Answer, number, Audit?]) {
    this.log.push('claim');
    return super.claim(...args);
  }
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys after approval',
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  run: (args, ctx) => (ctx?.answer ? `deployed ${String(args.env)}` : pending({ kind: 'approval', prompt: `Deploy ${String(args.env)}?` })),
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

it('an answer through the inbox reads the stored call once before its claim', async () => {
  const store = new LoggedStore();
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(deploy), store });
  const inbox = createInbox({ coordinator, authorize: bearerTokens([{ token: TOKEN, principal: { id: 'alice' } }]) });
  closers.push(async () => inbox.close());
  const base = await listening(
    createServer((request, response) => inbox(request, response)),
    closers,
  );
  const id = pendingOf(await coordinator.execute('deploy', { env: 'prod' }))!.id;
  store.log.length = 0;
  const response = await fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ok: true }),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ suspension: { status: 'resolved' } });
  const claimAt = store.log.indexOf('claim');
  expect(claimAt).toBeGreaterThan(-1);
  expect(store.log.slice(0, claimAt).filter((entry) => entry === 'get')).toHaveLength(1);
});
