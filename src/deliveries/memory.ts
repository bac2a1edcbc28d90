import { deliveryLimit, type Delivery, type DeliveryFilter, type DeliveryStore } from './store';

/** Deliveries in this process: the memory store's, and a channel's default when its store keeps none. */
export class MemoryDeliveries implements DeliveryStore {
  private readonly rows = new Map<string, Delivery>();

  async insertDelivery(delivery: Delivery): Promise<boolean> {
    if (this.rows.has(delivery.id)) return false;
    this.rows.set(delivery.id, structuredClone({ ...delivery, version: 1 }));
    return true;
  }

  async saveDelivery(delivery: Delivery): Promise<boolean> {
    const now = this.rows.get(delivery.id);
    if (!now || now.version !== delivery.version - 1) return false;
    this.rows.set(delivery.id, structuredClone(delivery));
    return true;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const row = this.rows.get(id);
    return row ? structuredClone(row) : undefined;
  }

  async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    const due = filter.dueBy;
    const rows = [...this.rows.values()].filter(
      (row) => (filter.callId === undefined || row.callId === filter.callId) && (due === undefined || (!row.done && row.dueAt <= due)),
    );
    if (due !== undefined) rows.sort((a, b) => a.dueAt - b.dueAt);
    return rows.slice(0, deliveryLimit(filter)).map((row) => structuredClone(row));
  }
}
