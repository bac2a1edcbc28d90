import type { Message, Task } from '@a2a-js/sdk';
import type { SuspensionStore } from '../../suspension/store';
import { DEFAULT_KEY_LEASE_MS, DEFAULT_KEY_RETENTION_MS, keyedSlot, keyedStoreOf } from '../../suspension/keyed';
import type { Principal } from '../../suspension/audit';
import { A2A_IDEMPOTENCY_METADATA } from '../idempotency';
import { A2ARequestError } from './errors';

/** The longest idempotency key taken from a message's metadata. */
const MAX_KEY_LENGTH = 255;

/**
 * New tasks keyed by the idempotency key of their first message (docs/a2a.md, "Idempotency
 * keys"): the key's outcome is the task it started, recorded in the store's keyed-call table the
 * moment the executor starts that task, so a repeat of the message (another connection, another
 * process, a client's retry after a crash) gets that task as it stands and starts nothing.
 * Keys are per principal: one principal's key never names another's task.
 */
export class KeyedTasks {
  /** Keys begun here whose task the executor has not started yet, by principal and message id. */
  private readonly begun = new Map<string, { slot: string; fence: number }>();

  constructor(
    private readonly store: SuspensionStore,
    private readonly load: (taskId: string) => Promise<Task | undefined>,
    private readonly retentionMs = DEFAULT_KEY_RETENTION_MS,
  ) {}

  /**
   * For a new task's message with a key: the task an earlier message with that key started (a
   * repeat), or `undefined` after the key was begun for this message (the executor records its task).
   */
  async repeatOf(message: Message, principal: Principal): Promise<Task | undefined> {
    const store = keyedStoreOf(this.store);
    const key = keyOf(message);
    if (key === undefined || store === undefined || message.taskId) return undefined;
    const slot = keyedSlot('a2a', principal, 'message', key);
    const start = await store.beginKeyed(slot, DEFAULT_KEY_LEASE_MS, this.retentionMs);
    if (start.state === 'running')
      throw new A2ARequestError('busy', 'a message with this idempotency key is starting its task: send it again shortly');
    if (start.state === 'done') {
      const task = await this.load(start.outcome.output);
      if (task) return task;
      throw new A2ARequestError('not_pending', 'the task this idempotency key started is no longer kept');
    }
    this.begun.set(placeOf(principal, message), { slot, fence: start.fence });
    return undefined;
  }

  /** Drops what {@link repeatOf} began for a message whose task never started (the SDK refused it): its key lapses with its lease. */
  forget(message: Message, principal: Principal): void {
    this.begun.delete(placeOf(principal, message));
  }

  /** Called by the executor as it starts a new task: the key of its message (if begun here) now names it. */
  async started(message: Message, principal: Principal, taskId: string): Promise<void> {
    const place = placeOf(principal, message);
    const begun = this.begun.get(place);
    if (!begun) return;
    this.begun.delete(place);
    await keyedStoreOf(this.store)?.finishKeyed(begun.slot, begun.fence, { output: taskId, isError: false });
  }
}

/** The idempotency key of a message's metadata; a value that is not a short non-empty string is refused. */
function keyOf(message: Message): string | undefined {
  const key: unknown = message.metadata?.[A2A_IDEMPOTENCY_METADATA];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH)
    throw new A2ARequestError('bad_message', `the idempotency key must be a string of 1 to ${MAX_KEY_LENGTH} characters`);
  return key;
}

function placeOf(principal: Principal, message: Message): string {
  return JSON.stringify([principal.id, message.messageId]);
}
