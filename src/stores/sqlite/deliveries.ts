import { deliveryLimit, deliveryOf, type Delivery, type DeliveryFilter, type DeliveryStore } from '../../deliveries/store';
import { SqlitePart } from './part';

/**
 * Layout step 4 of the SQLite store, deliveries' block (docs/channels.md, "What is stored"):
 * one row per card, the delivery as JSON beside the columns a list filters on.
 */
export const DELIVERIES_SQLITE_DDL = `
    CREATE TABLE deliveries (
      id        TEXT PRIMARY KEY,
      call_id   TEXT NOT NULL,
      version   INTEGER NOT NULL,
      done      INTEGER NOT NULL,
      due_at    INTEGER NOT NULL,
      delivery  TEXT NOT NULL
    );
    CREATE INDEX deliveries_call ON deliveries (call_id);
    CREATE INDEX deliveries_due ON deliveries (due_at) WHERE done = 0;
`;

/** The deliveries of a `SqliteStore`, in its file; each statement prepared when it runs. */
export class SqliteDeliveries extends SqlitePart implements DeliveryStore {
  async insertDelivery(delivery: Delivery): Promise<boolean> {
    this.assertOpen();
    const row = { ...delivery, version: 1 };
    return this.run(
      () =>
        this.db
          .prepare(
            'INSERT OR IGNORE INTO deliveries (id, call_id, version, done, due_at, delivery) VALUES (@id, @call, 1, @done, @due, @json)',
          )
          .run({ id: row.id, call: row.callId, done: row.done ? 1 : 0, due: row.dueAt, json: JSON.stringify(row) }).changes === 1,
      `insert delivery ${delivery.id}`,
    );
  }

  async saveDelivery(delivery: Delivery): Promise<boolean> {
    this.assertOpen();
    return this.run(
      () =>
        this.db
          .prepare(
            'UPDATE deliveries SET version = @version, done = @done, due_at = @due, delivery = @json WHERE id = @id AND version = @before',
          )
          .run({
            version: delivery.version,
            done: delivery.done ? 1 : 0,
            due: delivery.dueAt,
            json: JSON.stringify(delivery),
            id: delivery.id,
            before: delivery.version - 1,
          }).changes === 1,
      `save delivery ${delivery.id}`,
    );
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    this.assertOpen();
    const row = this.run(() => this.db.prepare('SELECT delivery FROM deliveries WHERE id = ?').get(id), `read delivery ${id}`) as
      { delivery: string } | undefined;
    return row ? deliveryOf(row.delivery) : undefined;
  }

  async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    this.assertOpen();
    const limit = deliveryLimit(filter);
    const due = filter.dueBy !== undefined;
    const where = [due ? 'done = 0 AND due_at <= @due' : '', filter.callId !== undefined ? 'call_id = @call' : ''].filter(Boolean);
    const sql = `SELECT delivery FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}ORDER BY ${due ? 'due_at' : 'id'} LIMIT @limit`;
    const params = { limit, ...(due ? { due: filter.dueBy } : {}), ...(filter.callId !== undefined ? { call: filter.callId } : {}) };
    const rows = this.run(() => this.db.prepare(sql).all(params), 'list deliveries') as { delivery: string }[];
    return rows.map((row) => deliveryOf(row.delivery));
  }
}
