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

  /**
   * The deliveries done (the card shows a settled call) and last saved before `cutoffMs` (each
   * save moves `dueAt` past its own instant), oldest first, and the deletion of one: what
   * `MemoryStore.prune` works through.
   */
  prunableDeliveries(cutoffMs: number): Delivery[] {
    return [...this.rows.values()]
      .filter((row) => row.done && row.dueAt < cutoffMs)
      .sort((a, b) => a.dueAt - b.dueAt)
      .map((row) => structuredClone(row));
  }

  deletePrunableDelivery(id: string, cutoffMs: number): boolean {
    const row = this.rows.get(id);
    return row !== undefined && row.done && row.dueAt < cutoffMs && this.rows.delete(id);
  }
}
