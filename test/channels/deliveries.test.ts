/**
 * The deliveries every store keeps (docs/channels.md, "What is stored"), one contract for the
 * memory, SQLite and PostgreSQL stores: an insert once per id, a save that is a compare-and-set
 * on the version, and the lists a channel's tick and a click read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import type { Delivery, DeliveryStore } from 'toolnexus-ts/channels';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

interface Opened {
  deliveries: DeliveryStore;
  close(): Promise<void>;
}

const STORES: Array<[string, () => Promise<Opened>]> = [
  ['MemoryStore', async () => ({ deliveries: new MemoryStore().deliveries, close: async () => undefined })],
  [
    'SqliteStore',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'toolnexus-deliveries-'));
      const store = new SqliteStore(join(dir, 'calls.db'));
      return {
        deliveries: store.deliveries,
        close: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'PostgresStore',
    async () => {
      const url = await postgresUrl();
      const schema = uniqueSchema('deliveries');
      const store = new PostgresStore({ connectionString: url, schema });
      await store.ensureSchema();
      return {
        deliveries: store.deliveries,
        close: async () => {
          await store.close();
          await dropSchema(url, schema);
        },
      };
    },
  ],
];

function delivery(callId: string, target: string, dueAt: number, done = false): Delivery {
  return { id: `${callId} ${target}`, callId, platform: 'slack', target, version: 1, done, attempts: 0, dueAt };
}

describe.each(STORES)('%s deliveries', (_name, open) => {
  let opened: Opened;
  beforeEach(async () => {
    opened = await open();
  });
  afterEach(() => opened.close());

  it('inserts once per id', async () => {
    const { deliveries } = opened;
    expect(await deliveries.insertDelivery(delivery('c1', 'slack:C1', 100))).toBe(true);
    expect(await deliveries.insertDelivery({ ...delivery('c1', 'slack:C1', 5), attempts: 9 })).toBe(false);
    expect(await deliveries.getDelivery('c1 slack:C1')).toEqual(delivery('c1', 'slack:C1', 100));
    expect(await deliveries.getDelivery('nothing')).toBeUndefined();
  });

  it('keeps an escalation notice as one, due when its escalation comes due', async () => {
    const { deliveries } = opened;
    const notice = { ...delivery('c1', 'slack:D1', 900), id: 'c1 escalation slack:D1', escalation: true };
    expect(await deliveries.insertDelivery(notice)).toBe(true);
    expect(await deliveries.getDelivery(notice.id)).toEqual(notice);
    expect(await deliveries.listDeliveries({ dueBy: 899 })).toEqual([]);
    expect(await deliveries.listDeliveries({ dueBy: 900 })).toEqual([notice]);
  });

  it('saves by compare-and-set on the version: of two saves of one version, one wins', async () => {
    const { deliveries } = opened;
    await deliveries.insertDelivery(delivery('c1', 'slack:C1', 100));
    const posted = { ...delivery('c1', 'slack:C1', 200), version: 2, message: { threadId: 'slack:C1:1.2', id: '1.2' }, shown: 'k' };
    const results = await Promise.all([deliveries.saveDelivery(posted), deliveries.saveDelivery({ ...posted, shown: 'other' })]);
    expect(results.sort()).toEqual([false, true]);
    expect((await deliveries.getDelivery('c1 slack:C1'))?.version).toBe(2);
    expect(await deliveries.saveDelivery({ ...posted, version: 5 })).toBe(false);
    expect(await deliveries.saveDelivery({ ...posted, id: 'unknown', version: 2 })).toBe(false);
  });

  it("lists one call's deliveries, and those due and not done, earliest first", async () => {
    const { deliveries } = opened;
    await deliveries.insertDelivery(delivery('c1', 'slack:C1', 300));
    await deliveries.insertDelivery(delivery('c1', 'slack:C2', 100));
    await deliveries.insertDelivery(delivery('c2', 'slack:C1', 200));
    await deliveries.insertDelivery(delivery('c3', 'slack:C1', 50, true));
    expect((await deliveries.listDeliveries({ callId: 'c1' })).map((d) => d.target).sort()).toEqual(['slack:C1', 'slack:C2']);
    expect((await deliveries.listDeliveries({ dueBy: 250 })).map((d) => d.id)).toEqual(['c1 slack:C2', 'c2 slack:C1']);
    expect((await deliveries.listDeliveries({ dueBy: 1000, limit: 1 })).map((d) => d.id)).toEqual(['c1 slack:C2']);
  });
});
