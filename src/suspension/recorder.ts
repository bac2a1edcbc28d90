import { StoreError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import type { PendingRequest } from '../results/wire';
import type { Clock } from '../timing/clock';
import type { Principal } from './audit';
import type { AutomaticRecord } from './automatic';
import type { Binding } from './binding';
import type { SuspendedCall, SuspensionStore } from './store';
import { checkInsertable } from './validate';

/** Where a recorded call sits: its run and tool-call id, and the span that suspended it. */
export interface RecordedPlace {
  callId?: string;
  runId?: string;
  traceparent?: string;
  requestedBy?: Principal;
  automatic?: AutomaticRecord;
  session?: string;
}

/** Writes a coordinator's new suspensions: each sealed with its binding, checked once, inserted. */
export class Recorder {
  constructor(
    private readonly store: SuspensionStore,
    private readonly binding: Binding,
    private readonly clock: Clock,
  ) {}

  /**
   * Records a pending call of `tool` with `args` (plain JSON, as the store keeps them) and
   * returns it as stored.
   * @throws {@link StoreError} the store cannot record it.
   */
  async record(request: PendingRequest, tool: string, args: unknown, place: RecordedPlace): Promise<SuspendedCall> {
    const call: SuspendedCall = { request, tool, args, status: 'pending', createdAt: new Date(this.clock.now()).toISOString() };
    if (place.callId !== undefined) call.callId = place.callId;
    if (place.runId !== undefined) call.runId = place.runId;
    if (place.traceparent !== undefined) call.traceparent = place.traceparent;
    if (place.requestedBy !== undefined) call.requestedBy = { ...place.requestedBy };
    if (place.automatic !== undefined) call.automatic = { ...place.automatic };
    if (place.session !== undefined) call.session = place.session;
    const sealed = this.binding.seal(call);
    checkInsertable(sealed);
    try {
      await this.store.insert(sealed);
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new StoreError(`could not record suspension ${sealed.request.id}: ${messageOf(error)}`, { cause: error });
    }
    return sealed;
  }
}
