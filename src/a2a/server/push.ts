import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse, type Task, type TaskPushNotificationConfig, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
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
  /**
   * What this agent last told of the task ({@link toldKey}): its state, and for `input-required`
   * the requests asked, so a new question is told again. A notification is sent when it changes.
   */
  told?: string;
  /** The told state is an end: nothing more is watched. */
  ended?: boolean;
  /** The version of the run checkpoint the push state was last brought up to (0 before any). */
  seen?: number;
}

/** Where a task's run stands in the store: its checkpoint's version and the task it reads as (`undefined` before any checkpoint). */
export type DurableTask = (taskId: string) => Promise<{ version: number; task: Task } | undefined>;

/** The states a notification is sent for. */
const TOLD: readonly TaskState[] = [
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
];
/** The states that end a task: once one is told, the task is no longer watched. */
const ENDS: readonly TaskState[] = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED];
const SWEEP_MS = 1000;
/** The most moved tasks one sweep reads. */
const MOVED_PER_SWEEP = 50;
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
 *
 * A task is told of as its run's checkpoint stands whenever there is one, whichever process
 * moved it: the SDK's events of a task this process drives, and a sweep of the tasks whose run's
 * checkpoint moved past the version last told of (`watch`: continued by the inbox, the CLI or
 * `answerAs` in a process that serves no A2A, or by an agent process that died before telling).
 * Each telling is a compare-and-set of the record that moves `told` and `seen` forward only, so
 * two processes never tell one state twice, nor an older state after a newer one.
 */
export class A2ATaskRecords implements PushNotificationStore, PushNotificationSender {
  private readonly clock: Clock;
  private readonly serializers = { '1.0': new V1PushNotificationSerializer(), '0.3': new V03PushNotificationSerializer() };
  private sweeper: ClockTimer | undefined;
  /** Where the next sweep of moved tasks goes on from: round them all, so no task that cannot be read holds the rest back. */
  private movedAfter: string | undefined;

  constructor(
    private readonly store: A2ATaskStore,
    private readonly options: A2APushOptions,
    private readonly logger: A2ALogger,
    /** The task as its run's checkpoint tells it: without it, only the SDK's events of this process are told of. */
    private readonly durable?: DurableTask,
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

  /**
   * The SDK tells of every event of a task this process drives: a state change to tell of goes
   * to the outbox, then out. The run's checkpoint is told when it shows a state to tell (it is
   * at least as new as the event); the event itself when there is no checkpoint (a run that
   * never waited) or the checkpoint shows none (a run that failed on an error).
   */
  async send(response: StreamResponse, _context: ServerCallContext): Promise<void> {
    const payload = response.payload;
    const update: TaskStatusUpdateEvent | undefined =
      payload?.$case === 'statusUpdate'
        ? payload.value
        : payload?.$case === 'task'
          ? { taskId: payload.value.id, contextId: payload.value.contextId, status: payload.value.status, metadata: undefined }
          : undefined;
    if (!update?.taskId || toldKey(update) === undefined) return;
    const durable = await this.durable?.(update.taskId).catch(() => undefined);
    if (durable && toldKey(updateOf(durable.task)) !== undefined) await this.tell(updateOf(durable.task), durable.version);
    else await this.tell(update, durable?.version ?? 0, response);
  }

  /**
   * Tells of `update` (the task at run checkpoint `version`) unless it was told, or the record
   * was brought up to a later version meanwhile; marks `version` seen either way.
   */
  private async tell(update: TaskStatusUpdateEvent, version: number, response?: StreamResponse): Promise<void> {
    const key = toldKey(update);
    const queued = await this.write(update.taskId, (record) => {
      const kept = stateOf(record);
      const seen = kept.seen ?? 0;
      if (version < seen) return false;
      if (key === undefined || kept.told === key || kept.configs.length === 0) {
        if (version === seen) return false;
        kept.seen = version;
        return true;
      }
      kept.told = key;
      kept.ended = ENDS.includes(update.status?.state as TaskState);
      kept.seen = version;
      const told = response ?? { payload: { $case: 'statusUpdate' as const, value: update } };
      for (const config of kept.configs) kept.outbox.push(this.delivery(config, told));
      return true;
    });
    if (queued) void this.deliver(update.taskId);
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
    await this.watch();
    const due = await this.store.listA2ADue(this.clock.now(), 50).catch(() => []);
    await Promise.all(due.map((record) => this.deliver(record.taskId)));
  }

  /** Tells of the tasks whose run's checkpoint moved past what was told (whichever process moved it), as it stands now. */
  private async watch(): Promise<void> {
    const durable = this.durable;
    // A store of its own made before `listA2AMoved` was asked of one: its tasks are told by the SDK's events only.
    if (!durable || typeof this.store.listA2AMoved !== 'function') return;
    let moved: A2ATaskRecord[];
    try {
      moved = await this.store.listA2AMoved(MOVED_PER_SWEEP, this.movedAfter);
    } catch {
      return;
    }
    this.movedAfter = moved.length === MOVED_PER_SWEEP ? moved[moved.length - 1]?.taskId : undefined;
    for (const record of moved) {
      const now = await durable(record.taskId).catch(() => undefined);
      if (now) await this.tell(updateOf(now.task), now.version).catch(() => undefined);
    }
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
      // Watched while someone is to be told and no end was told: the sweep compares `seen` with the run's checkpoint.
      if (state.configs.length > 0 && state.ended !== true) next.watch = state.seen ?? 0;
      else delete next.watch;
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

/** The status update a task stands for. */
function updateOf(task: Task): TaskStatusUpdateEvent {
  return { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined };
}

/** What telling of `update` records as told: its state, and for `input-required` its requests (the status message names them); `undefined` for a state not told of. */
function toldKey(update: TaskStatusUpdateEvent): string | undefined {
  const state = update.status?.state;
  if (state === undefined || !TOLD.includes(state)) return undefined;
  return state === TaskState.TASK_STATE_INPUT_REQUIRED ? `${state}:${update.status?.message?.messageId ?? ''}` : `${state}`;
}
