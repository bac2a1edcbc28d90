/**
 * Two approvers racing through two inboxes (two replicas) on one PostgreSQL database: the
 * database's claim picks one winner; the other replica answers 409 naming them
 * (docs/operating.md, "Inbox", "Races").
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { inboxRunner, SECRET_IBAN, TOKENS } from '../fixtures/inbox/tools';

let url: string;
let schema: string;
beforeAll(async () => {
  url = await postgresUrl();
  schema = uniqueSchema('inbox');
});
afterAll(() => dropSchema(url, schema));

async function replica(): Promise<{ base: string; store: PostgresStore; close(): Promise<void> }> {
  const store = new PostgresStore({ connectionString: url, schema });
  const runner = inboxRunner(store);
  const inbox = createInbox({
    runner,
    authorize: bearerTokens([
      { token: TOKENS.alice, principal: { id: 'alice' } },
      { token: TOKENS.bob, principal: { id: 'bob' } },
    ]),
  });
  const server = createServer(inbox);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    store,
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

it('one of two approvers on two replicas wins; the other gets 409 naming the winner', async () => {
  const [one, two] = await Promise.all([replica(), replica()]);
  try {
    for (let round = 0; round < 3; round++) {
      const halted = await inboxRunner(one.store).run(`pay ${100 + round} from acc-1 to ${SECRET_IBAN}`);
      const id = halted.pending?.id as string;
      const post = (base: string, token: string) =>
        fetch(`${base}/api/suspensions/${id}/answer`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ok: true }),
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { error?: { answeredBy?: { id: string } } },
        }));
      const [alice, bob] = await Promise.all([post(one.base, TOKENS.alice), post(two.base, TOKENS.bob)]);
      const statuses = [alice.status, bob.status].sort();
      expect(statuses).toEqual([200, 409]);
      const winner = (await one.store.get(id))?.answeredBy?.id;
      const loser = alice.status === 409 ? alice : bob;
      expect(winner).toBe(alice.status === 200 ? 'alice' : 'bob');
      expect(loser.body.error?.answeredBy?.id).toBe(winner);
    }
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
});
