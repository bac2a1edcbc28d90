import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { A2ATaskRecord, A2ATaskStore } from '../../stores/a2a-tasks';
import type { Principal } from '../../suspension/audit';
import { systemClock, type Clock, type ClockTimer } from '../../timing/clock';
import { A2ARequestError, wireError } from './errors';
import { principalOf } from './executor';
import type { A2ALogger, A2APushOptions } from './options';
import { checkPushUrl, postNotification } from './push-target';

/** A client's push config as the task record keeps it. */
interface StoredConfig {
  id: string;
  url: string;
  token: string;
  authentication?: { scheme: string; credentials: string };
  /** The A2A version it was set over: its notifications are shaped for it. */
  wireVersion: string;
}

/** One notification not yet delivered: its id is the `Idempotency-Key` of every attempt. */
interface Delivery {
  id: string;
  configId: string;
  body: string;
  contentType: string;
  attempts: number;
  dueAt: number;
  /** While one process sends it: until when it holds it. */
  heldUntil?: number;
}

interface RecordState {
  configs: StoredConfig[];
  outbox: Delivery[];
  /** The last state this agent told of the task (a notification is sent when it changes). */
  told?: number;
}

/** The states a notification is sent for. */
const TOLD: readonly TaskState[] = [
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
];
const SWEEP_MS = 1000;
const MAX_RETRY_MS = 300_000;
const MAX_WRITES = 20;

/**
 * The agent's A2A task records (docs/a2a.md, "Listing and push"): whose each task is, the push
 * configs its owner set (the SDK's `PushNotificationStore`, owner only), and the outbox of
 * notifications (the SDK's `PushNotificationSender`): a state change the agent tells of
 * (`input-required`, `completed`, `failed`, `canceled`) becomes one delivery per config, written
 * to the record before it is sent, then POSTed with the client's token as the SDK sends it, and
 * retried with backoff until a 2xx, from any process over the store (a sweep picks up what a
 * process that died left).
 */
export class A2ATaskRecords implements PushNotificationStore, PushNotificationSender {
  private readonly clock: Clock;
  private readonly serializers = { '1.0': new V1PushNotificationSerializer(), '0.3': new V03PushNotificationSerializer() };
  private sweeper: ClockTimer | undefined;

  constructor(
    private readonly store: A2ATaskStore,
    private readonly options: A2APushOptions,
    private readonly logger: A2ALogger,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Records a task as `owner`'s the first time it is seen; refuses one that is another's. */
  async own(taskId: string, owner: Principal, contextId: string): Promise<A2ATaskRecord> {
    const found = await this.store.loadA2ATask(taskId);
    if (found) {
      if (found.owner !== owner.id) throw new A2ARequestError('not_yours', `task ${taskId} not found`);
      return found;
    }
    const record: A2ATaskRecord = {
      taskId,
      owner: owner.id,
      contextId,
      createdAt: new Date(this.clock.now()).toISOString(),
      version: 1,
      state: { configs: [], outbox: [] },
    };
    if (await this.store.saveA2ATask(record)) return record;
    return this.own(taskId, owner, contextId);
  }

  /** A page of `owner`'s tasks' records, oldest first. */
  page(owner: Principal, limit: number, after: { createdAt: string; taskId: string } | undefined): Promise<A2ATaskRecord[]> {
    return this.store.listA2ATasks({ owner: owner.id, limit, ...(after ? { after } : {}) });
  }

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    try {
      // Whose task it is first: another's reads as no task, whatever the URL.
      await this.own(taskId, principalOf(context), '');
      await checkPushUrl(config.url, this.options.allowPrivateNetworks === true);
      const id = config.id || randomUUID();
      config.id = id;
      const stored: StoredConfig = { id, url: config.url, token: config.token ?? '', wireVersion: context.requestedVersion || '0.3' };
      if (config.authentication?.scheme && config.authentication.credentials)
        stored.authentication = { scheme: config.authentication.scheme, credentials: config.authentication.credentials };
      await this.change(taskId, context, (state) => {
        const others = state.configs.filter((kept) => kept.id !== id);
        if (others.length >= (this.options.maxConfigs ?? 5))
          throw new A2ARequestError('bad_push_url', `a task keeps at most ${this.options.maxConfigs ?? 5} push configs`);
        state.configs = [...others, stored];
      });
    } catch (error) {
      throw wireError(error);
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    const record = await this.mine(taskId, context);
    return stateOf(record).configs.map((config) => ({
      tenant: '',
      id: config.id,
      taskId,
      url: config.url,
      token: config.token,
      authentication: config.authentication,
    }));
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    await this.change(taskId, context, (state) => {
      state.configs = configId === undefined ? [] : state.configs.filter((config) => config.id !== configId);
    });
  }

  /** The SDK tells of every event of a task this process drives: a state change to tell of goes to the outbox, then out. */
  async send(response: StreamResponse, _context: ServerCallContext): Promise<void> {
    const payload = response.payload;
    const taskId = payload?.$case === 'task' ? payload.value.id : payload?.$case === 'statusUpdate' ? payload.value.taskId : undefined;
    const state =
      payload?.$case === 'task' ? payload.value.status?.state : payload?.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
    if (!taskId || state === undefined || !TOLD.includes(state)) return;
    const queued = await this.write(taskId, (record) => {
      const kept = stateOf(record);
      if (kept.told === state || kept.configs.length === 0) return false;
      kept.told = state;
      for (const config of kept.configs) kept.outbox.push(this.delivery(config, response));
      return true;
    });
    if (queued) void this.deliver(taskId);
  }

  /** Sends what is due of the outbox every second, from this process, until {@link stop}. */
  start(): void {
    if (this.sweeper) return;
    const beat = (): void => {
      this.sweeper = this.clock.setTimeout(() => {
        void this.sweep().finally(beat);
      }, SWEEP_MS);
      this.sweeper.unref?.();
    };
    beat();
  }

  stop(): void {
    if (this.sweeper) this.clock.clearTimeout(this.sweeper);
    this.sweeper = undefined;
  }

  private async sweep(): Promise<void> {
    const due = await this.store.listA2ADue(this.clock.now(), 50).catch(() => []);
    await Promise.all(due.map((record) => this.deliver(record.taskId)));
  }

  /** The body of one notification, bounded: a status too big is sent without its message. */
  private delivery(config: StoredConfig, response: StreamResponse): Delivery {
    const serializer = config.wireVersion === '1.0' ? this.serializers['1.0'] : this.serializers['0.3'];
    let { body, contentType } = serializer.serialize(response);
    if (Buffer.byteLength(body) > (this.options.maxBodyBytes ?? 64 * 1024) && response.payload?.$case === 'statusUpdate') {
      const update = response.payload.value;
      const status = update.status ? { ...update.status, message: undefined } : undefined;
      ({ body, contentType } = serializer.serialize({ payload: { $case: 'statusUpdate', value: { ...update, status } } }));
    }
    return { id: randomUUID(), configId: config.id, body, contentType, attempts: 0, dueAt: this.clock.now() };
  }

  /** Sends each due delivery of the task once, each held by this process while it is sent. */
  private async deliver(taskId: string): Promise<void> {
    const now = this.clock.now();
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let held: Delivery[] = [];
    let configs: StoredConfig[] = [];
    await this.write(taskId, (record) => {
      const state = stateOf(record);
      held = state.outbox.filter((entry) => entry.dueAt <= now && (entry.heldUntil ?? 0) <= now);
      for (const entry of held) entry.heldUntil = now + 2 * timeoutMs;
      configs = state.configs;
      return held.length > 0;
    }).catch(() => false);
    for (const entry of held) {
      const config = configs.find((kept) => kept.id === entry.configId);
      const status = config ? await this.post(config, entry, timeoutMs) : 200;
      const sent = status >= 200 && status < 300;
      const attempts = entry.attempts + 1;
      const last =
        !sent && (attempts >= (this.options.maxAttempts ?? 8) || (status >= 400 && status < 500 && status !== 408 && status !== 429));
      if (last) this.logger.error(`toolnexus a2a: a push notification of task ${taskId} was given up after ${attempts} attempts`);
      const retryAt = this.clock.now() + Math.min(MAX_RETRY_MS, (this.options.retryDelayMs ?? 1000) * 2 ** (attempts - 1));
      await this.write(taskId, (record) => {
        const state = stateOf(record);
        state.outbox = state.outbox.flatMap((kept) => {
          if (kept.id !== entry.id) return [kept];
          if (sent || last) return [];
          return [{ ...kept, attempts, dueAt: retryAt, heldUntil: undefined }];
        });
        return true;
      }).catch(() => undefined);
      if (!sent && !last) {
        const timer = this.clock.setTimeout(() => void this.deliver(taskId), retryAt - this.clock.now());
        timer.unref?.();
      }
    }
  }

  /** One attempt; 0 for a network error or a refused target. */
  private async post(config: StoredConfig, entry: Delivery, timeoutMs: number): Promise<number> {
    const headers: Record<string, string> = { 'content-type': entry.contentType, 'idempotency-key': entry.id };
    // As the SDK's own sender authenticates to the client: its scheme and credentials, else its token.
    if (config.authentication) headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
    else if (config.token) headers['x-a2a-notification-token'] = config.token;
    return postNotification({
      url: config.url,
      body: entry.body,
      headers,
      timeoutMs,
      allowPrivate: this.options.allowPrivateNetworks === true,
    }).catch(() => 0);
  }

  /** The caller's own record of `taskId`; another's reads as no task. */
  private async mine(taskId: string, context: ServerCallContext): Promise<A2ATaskRecord> {
    const record = await this.store.loadA2ATask(taskId);
    if (!record || record.owner !== principalOf(context).id) throw wireError(new A2ARequestError('not_yours', `task ${taskId} not found`));
    return record;
  }

  /** Changes the caller's record of `taskId` (made now when the task is new: a config sent with its first message). */
  private async change(taskId: string, context: ServerCallContext, edit: (state: RecordState) => void): Promise<void> {
    const principal = principalOf(context);
    await this.own(taskId, principal, '');
    await this.write(taskId, (record) => {
      edit(stateOf(record));
      return true;
    });
  }

  /** Edits the record by compare-and-set, again on a conflict; `edit` says whether anything changed. */
  private async write(taskId: string, edit: (record: A2ATaskRecord) => boolean): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_WRITES; attempt++) {
      const record = await this.store.loadA2ATask(taskId);
      if (!record) return false;
      if (!edit(record)) return false;
      const state = stateOf(record);
      const due = state.outbox.map((entry) => Math.max(entry.dueAt, entry.heldUntil ?? 0));
      const next: A2ATaskRecord = { ...record, version: record.version + 1, state: state as unknown as Record<string, unknown> };
      if (due.length > 0) next.dueAt = Math.min(...due);
      else delete next.dueAt;
      if (await this.store.saveA2ATask(next)) return true;
    }
    return false;
  }
}

/** The record's JSON as this server keeps it (an empty one for a record made elsewhere). */
function stateOf(record: A2ATaskRecord): RecordState {
  const state = record.state as unknown as Partial<RecordState>;
  state.configs ??= [];
  state.outbox ??= [];
  return state as RecordState;
}
