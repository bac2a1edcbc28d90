import { deliveryLimit, deliveryOf, type Delivery, type DeliveryFilter, type DeliveryStore } from '../../deliveries/store';
import { PostgresPart, type TableLayout } from './part';

/**
 * Layout step 4 of the PostgreSQL store, deliveries' block (docs/channels.md, "What is
 * stored"): as in SQLite, one row per card, the delivery as `json` beside the columns a list filters on.
 */
export const DELIVERIES_POSTGRES: TableLayout = {
  columns: `
       id        text PRIMARY KEY,
       call_id   text NOT NULL,
       version   integer NOT NULL,
       done      boolean NOT NULL,
       due_at    bigint NOT NULL,
       delivery  json NOT NULL`,
  indexes: { deliveries_call_idx: '(call_id)', deliveries_due_idx: '(due_at) WHERE NOT done' },
};

/** The deliveries of a `PostgresStore`, in its schema: a save is a compare-and-set on `version`. */
export class PostgresDeliveries extends PostgresPart implements DeliveryStore {
  async insertDelivery(delivery: Delivery): Promise<boolean> {
    const row = { ...delivery, version: 1 };
    const result = await this.query(
      `insert of delivery ${delivery.id}`,
      `INSERT INTO ${this.table} (id, call_id, version, done, due_at, delivery) VALUES ($1, $2, 1, $3, $4, $5::json) ON CONFLICT (id) DO NOTHING`,
      [row.id, row.callId, row.done, row.dueAt, JSON.stringify(row)],
    );
    return result.rowCount === 1;
  }

  async saveDelivery(delivery: Delivery): Promise<boolean> {
    const result = await this.query(
      `save of delivery ${delivery.id}`,
      `UPDATE ${this.table} SET version = $1, done = $2, due_at = $3, delivery = $4::json WHERE id = $5 AND version = $6`,
      [delivery.version, delivery.done, delivery.dueAt, JSON.stringify(delivery), delivery.id, delivery.version - 1],
    );
    return result.rowCount === 1;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const result = await this.query<{ delivery: string }>(
      `read of delivery ${id}`,
      `SELECT delivery::text AS delivery FROM ${this.table} WHERE id = $1`,
      [id],
    );
    return result.rows[0] ? deliveryOf(result.rows[0].delivery) : undefined;
  }

  async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    const values: unknown[] = [];
    const where: string[] = [];
    if (filter.dueBy !== undefined) {
      values.push(filter.dueBy);
      where.push(`NOT done AND due_at <= $${values.length}`);
    }
    if (filter.callId !== undefined) {
      values.push(filter.callId);
      where.push(`call_id = $${values.length}`);
    }
    values.push(deliveryLimit(filter));
    const result = await this.query<{ delivery: string }>(
      'list of deliveries',
      `SELECT delivery::text AS delivery FROM ${this.table} ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}` +
        `ORDER BY ${filter.dueBy !== undefined ? 'due_at' : 'id'} LIMIT $${values.length}`,
      values,
    );
    return result.rows.map((row) => deliveryOf(row.delivery));
  }
}
