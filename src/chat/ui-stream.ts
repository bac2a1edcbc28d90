import type { ToolResult } from '../results/wire';
import { dataUrl } from '../models/media';
import type { ToolMedia } from '../models/types';
import { contentOf, isMedia } from '../results/content';
import { ToolnexusError } from '../errors';
import type { ToolCall } from '../models/types';
import type { RunEvent, RunResult } from '../runner/core/types';
import type { Toolkit } from '../toolkit/toolkit';
import type { ChatApprovalData, ChatProgressData, ChatSubAgentData, UIStreamPart } from './parts';
import { jsonOrText } from '../runner/redact-run';
import { StreamRedactor, TextHold } from './redact';
import { steerPart } from './steer';

/** Options of {@link toUIMessageStream}. */
export interface UIStreamOptions {
  /** The assistant message's id: the same for a run's first stream and every resume, so the page continues one message. */
  messageId: string;
  /** Parts sent before the run's own (a resume's answered calls). */
  before?: readonly UIStreamPart[];
  /**
   * The `errorText` of a failed run. Default: the error's stable `code` only
   * (`the run failed: TOOLNEXUS_MODEL_HTTP`), never its message, which may quote a provider's body.
   */
  errorText?: (error: unknown) => string;
  /**
   * The toolkit of the run's tools: given, every part is redacted as every other front end
   * redacts a call (its `@Sensitive()` arguments read `"[redacted]"`, and so does every copy
   * of their values in results, requests and the model's text). The chat front ends pass the
   * runner's. Without it, nothing is redacted.
   */
  toolkit?: Toolkit;
  /** Tool calls made before this stream (the session's earlier turns): their sensitive values are redacted here too. */
  calls?: readonly ToolCall[];
  /**
   * What the page sees of a sub-agent's own work (its events carry `path`). `'hidden'`
   * (default): nothing; the customer sees the sub-agent tool's call and result and the
   * agent's answer, so the sub-agent's answer appears once. `'part'`: a
   * `data-toolnexus-sub-agent` part per sub-agent call, apart from the customer's text and
   * tool parts (docs/chat.md, "Sub-agents").
   */
  subAgents?: 'hidden' | 'part';
  /**
   * What the page's principal may do with an approval, by the approval's id: when it gives
   * data, a `data-toolnexus-approval` part follows the approval's `tool-approval-request`
   * (docs/chat.md, "Who may answer in the chat"). The chat front ends fill it from the
   * coordinator's answer policy before each approval's event reaches the stream.
   */
  approvalData?: (approvalId: string) => ChatApprovalData | undefined;
}

/** The message id of a run's assistant message: stable across a halt and every resume. */
export function messageIdOf(runId: string): string {
  return `msg-${runId}`;
}

/**
 * Turns a run's events (`runner.stream`, `resumeStream`, `continueStream`, `recoverStream`) into UI message
 * stream parts: `start`, a `start-step`/`finish-step` per model turn, text and reasoning
 * blocks, each tool call's input and output, `tool-approval-request` for an approval,
 * `data-toolnexus-request` for any other suspension, and `finish`. A failed run ends with an
 * `error` part. Stopping the iteration stops the run.
 */
export async function* toUIMessageStream(events: AsyncIterable<RunEvent>, options: UIStreamOptions): AsyncGenerator<UIStreamPart> {
  for await (const batch of uiPartBatches(events, options)) yield* batch;
}

/**
 * {@link toUIMessageStream} as one batch of parts per run event: what the HTTP front ends
 * write, one write per event, so the UI stream costs no more awaits than the events do.
 */
export async function* uiPartBatches(events: AsyncIterable<RunEvent>, options: UIStreamOptions): AsyncGenerator<UIStreamPart[]> {
  const writer = new UIPartWriter(options);
  yield writer.start();
  try {
    for await (const event of events) {
      const batch = writer.next(event);
      if (batch.length > 0) yield batch;
    }
  } catch (error) {
    yield writer.fail(error);
    return;
  }
  yield writer.finish();
}

/** Turns run events into UI stream parts one event at a time, synchronously (the state of one response). */
export class UIPartWriter {
  private readonly state: StepState;
  private readonly subAgents: SubAgentParts | undefined;
  private result: RunResult | undefined;

  constructor(private readonly options: UIStreamOptions) {
    const redactor = new StreamRedactor(options.toolkit);
    for (const call of options.calls ?? []) redactor.call(call.name, call.arguments);
    this.state = new StepState(options.messageId, redactor, options.approvalData);
    if (options.subAgents === 'part') this.subAgents = new SubAgentParts(options.messageId, redactor);
  }

  /** The parts that open the response. */
  start(): UIStreamPart[] {
    const first: UIStreamPart[] = [{ type: 'start', messageId: this.options.messageId }];
    const before = this.options.before ?? [];
    if (before.length) first.push({ type: 'start-step' }, ...before.map((part) => this.state.redactor.part(part)), { type: 'finish-step' });
    return first;
  }

  /** The parts of one run event (none for `done`, whose result `finish` reports). */
  next(event: RunEvent): UIStreamPart[] {
    // A sub-agent's events are its own work, not the customer's message: they would add its
    // text to the agent's, and its tool calls (named from a toolkit this one does not know,
    // so unredacted) to the customer's.
    if (event.path !== undefined && event.path.length > 0) return this.subAgents?.event(event, event.path) ?? [];
    if (event.type === 'done') {
      this.result = event.result;
      return [];
    }
    if (this.subAgents) return [...this.subAgents.parent(event), ...this.parts(event)];
    return this.parts(event);
  }

  private parts(event: Exclude<RunEvent, { type: 'done' }>): UIStreamPart[] {
    // The common case, a delta of the block already open, without a generator.
    if (event.type === 'text' || event.type === 'reasoning') {
      const delta = this.state.delta(event);
      if (delta) return [delta];
    }
    return [...this.state.parts(event)];
  }

  /** The parts that close a response whose run ended. */
  finish(): UIStreamPart[] {
    const stop = this.result?.stop;
    return [
      ...(this.subAgents?.flush() ?? []),
      ...this.state.close(),
      ...(stop ? [{ type: 'data-toolnexus-stop', id: 'stop', data: stop } as const] : []),
      { type: 'finish', finishReason: finishReason(this.result) },
    ];
  }

  /** The parts that close a response whose run failed: an `error` part without the error's message. */
  fail(error: unknown): UIStreamPart[] {
    return [
      ...(this.subAgents?.flush() ?? []),
      ...this.state.close(),
      { type: 'error', errorText: (this.options.errorText ?? defaultErrorText)(error) },
      { type: 'finish', finishReason: 'error' },
    ];
  }
}

function finishReason(result: RunResult | undefined): 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'other' {
  if (result?.status === 'done') return 'stop';
  if (result?.status === 'incomplete' || result?.status === 'budget_exceeded') return 'length';
  if (result?.status === 'blocked') return 'content-filter';
  if (result?.status === 'halted') return 'tool-calls';
  return 'other';
}

function defaultErrorText(error: unknown): string {
  return `the run failed: ${error instanceof ToolnexusError ? error.code : 'an internal error'}`;
}

/** A sub-agent call's part as it is built: sent again (same id, so the page replaces it) when it changed. */
interface SubAgentEntry {
  id: string;
  data: ChatSubAgentData;
  changed: boolean;
}

/**
 * The `data-toolnexus-sub-agent` parts of one response. A sub-agent's events name the
 * sub-agent tools down to it (`path`), not the call: they are given to the one open call of
 * the agent's tool of that name, and to a part per tool name when there is none (a resumed
 * sub-agent) or several at once. Text is sent when something else happens (a tool, the
 * call's result, the response's end), not per delta, so the part is resent a bounded number
 * of times. Tool inputs and outputs are not sent: the sub-agent's `@Sensitive()` fields are
 * declared in its own toolkit, which the chat does not know.
 */
class SubAgentParts {
  private readonly open = new Map<string, string[]>();
  private readonly entries = new Map<string, SubAgentEntry>();

  constructor(
    private readonly messageId: string,
    private readonly redactor: StreamRedactor,
  ) {}

  /** Follows the agent's own calls (which sub-agent call is open), and sends what changed before them. */
  parent(event: Exclude<RunEvent, { type: 'done' }>): UIStreamPart[] {
    if (event.type === 'tool_call') {
      this.open.set(event.call.name, [...(this.open.get(event.call.name) ?? []), event.call.id]);
      return [];
    }
    if (event.type !== 'tool_result' && event.type !== 'pending') return this.flush();
    for (const [name, ids] of this.open) {
      if (!ids.includes(event.callId)) continue;
      const rest = ids.filter((id) => id !== event.callId);
      if (rest.length > 0) this.open.set(name, rest);
      else this.open.delete(name);
    }
    return this.flush();
  }

  /** One event of a sub-agent: its call's part, sent at once unless only its text grew. */
  event(event: RunEvent, path: readonly string[]): UIStreamPart[] {
    if (event.type === 'done') return [];
    const agent = path[0] as string;
    const calls = this.open.get(agent);
    const toolCallId = calls?.length === 1 ? calls[0] : undefined;
    const key = toolCallId ?? `agent-${agent}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const data: ChatSubAgentData = { agent, text: '', tools: [] };
      if (toolCallId !== undefined) data.toolCallId = toolCallId;
      entry = { id: `${this.messageId}-sub-${key}`, data, changed: true };
      this.entries.set(key, entry);
    }
    const data = entry.data;
    entry.changed = true;
    switch (event.type) {
      case 'text':
        data.text += event.delta;
        return [];
      case 'reasoning':
        return [];
      case 'tool_call':
        data.tools.push({ path: [...path], toolCallId: event.call.id, toolName: event.call.name, state: 'running' });
        break;
      case 'tool_result':
      case 'pending': {
        const tool = data.tools.find((t) => t.toolCallId === event.callId && t.path.join('/') === path.join('/'));
        const state = event.type === 'pending' ? 'waiting' : event.result.isError ? 'error' : 'done';
        if (tool) tool.state = state;
        break;
      }
    }
    return this.flush();
  }

  /** Every part that changed since it was last sent. */
  flush(): UIStreamPart[] {
    const parts: UIStreamPart[] = [];
    for (const entry of this.entries.values()) {
      if (!entry.changed) continue;
      entry.changed = false;
      // A copy: the entry keeps growing after the part is handed on.
      parts.push({ type: 'data-toolnexus-sub-agent', id: entry.id, data: this.redactor.value(structuredClone(entry.data)) });
    }
    return parts;
  }
}

/** Where the stream is inside a step: the open text or reasoning block, and whether tools ran since the step began. */
class StepState {
  private inStep = false;
  private toolsDone = false;
  private open: { kind: 'text' | 'reasoning'; id: string; hold: TextHold } | undefined;
  private blocks = 0;

  constructor(
    private readonly messageId: string,
    readonly redactor: StreamRedactor,
    private readonly approvalData: UIStreamOptions['approvalData'],
  ) {}

  *parts(event: Exclude<RunEvent, { type: 'done' }>): Generator<UIStreamPart> {
    switch (event.type) {
      case 'text':
      case 'reasoning': {
        yield* this.step();
        if (this.open?.kind !== event.type) {
          yield* this.endBlock();
          this.open = { kind: event.type, id: `${this.messageId}-${event.type}-${++this.blocks}`, hold: new TextHold(this.redactor) };
          yield { type: `${event.type}-start`, id: this.open.id };
        }
        const delta = this.redactor.active ? this.open.hold.push(event.delta) : event.delta;
        if (delta !== '') yield { type: `${event.type}-delta`, id: this.open.id, delta };
        return;
      }
      case 'tool_call': {
        yield* this.step();
        yield* this.endBlock();
        const { id, name } = event.call;
        const input = this.redactor.call(name, event.call.arguments);
        yield { type: 'tool-input-start', toolCallId: id, toolName: name };
        yield { type: 'tool-input-available', toolCallId: id, toolName: name, input };
        return;
      }
      case 'tool_result':
        this.toolsDone = true;
        yield* this.endBlock();
        yield this.redactor.part(outputPart(event.callId, event.result));
        for (const part of fileParts(event.result)) yield this.redactor.part(part);
        return;
      case 'progress': {
        const data: ChatProgressData = { toolCallId: event.callId, toolName: event.name, progress: event.progress };
        if (event.total !== undefined) data.total = event.total;
        if (event.message !== undefined) data.message = event.message;
        yield this.redactor.part({ type: 'data-toolnexus-progress', id: `progress-${event.callId}`, data, transient: true });
        return;
      }
      case 'steered':
        yield* this.endBlock();
        yield this.redactor.part(steerPart({ messageId: event.message.id, text: event.message.content, state: 'taken' }));
        return;
      case 'pending': {
        this.toolsDone = true;
        yield* this.endBlock();
        for (const part of requestParts(event.callId, event.request)) yield this.redactor.part(part);
        const data = event.request.kind === 'approval' ? this.approvalData?.(event.request.id) : undefined;
        if (data) yield this.redactor.part(approvalPart(data));
        return;
      }
    }
  }

  /** The delta part of `event` when its block is open and its step still runs; otherwise undefined. */
  delta(event: { type: 'text' | 'reasoning'; delta: string }): UIStreamPart | undefined {
    const open = this.open;
    // With values to redact, a delta may be held back: the general path sends what it may.
    if (!this.inStep || this.toolsDone || open?.kind !== event.type || this.redactor.active) return undefined;
    return { type: `${event.type}-delta`, id: open.id, delta: event.delta };
  }

  /** A new step begins with the model's first output after the tools of the last one. */
  private *step(): Generator<UIStreamPart> {
    if (this.inStep && !this.toolsDone) return;
    if (this.inStep) yield* this.close();
    this.inStep = true;
    this.toolsDone = false;
    yield { type: 'start-step' };
  }

  private *endBlock(): Generator<UIStreamPart> {
    if (!this.open) return;
    const rest = this.open.hold.flush();
    if (rest !== '') yield { type: `${this.open.kind}-delta`, id: this.open.id, delta: rest };
    yield { type: `${this.open.kind}-end`, id: this.open.id };
    this.open = undefined;
  }

  *close(): Generator<UIStreamPart> {
    yield* this.endBlock();
    if (!this.inStep) return;
    this.inStep = false;
    yield { type: 'finish-step' };
  }
}

/** A tool's result as the page shows it: its output parsed when it is JSON; an error as `tool-output-error`. */
export function outputPart(toolCallId: string, result: { output: string; isError: boolean }): UIStreamPart {
  if (result.isError) return { type: 'tool-output-error', toolCallId, errorText: result.output };
  return { type: 'tool-output-available', toolCallId, output: jsonOrText(result.output) };
}

/**
 * The `file` parts of a result's media (docs/chat.md, "Rich results"): an image or file by its
 * URL, or its bytes as a `data:` URL. Media a stored result keeps by reference are not sent.
 */
export function* fileParts(result: ToolResult): Generator<FilePart> {
  const content = result.metadata === undefined ? undefined : contentOf(result);
  for (const part of content ?? []) {
    const file = isMedia(part) ? filePartOf(part) : undefined;
    if (file) yield file;
  }
}

type FilePart = Extract<UIStreamPart, { type: 'file' }>;

/** One media part as a `file` part, or `undefined` for one kept by reference. */
export function filePartOf(media: ToolMedia): FilePart | undefined {
  if ('ref' in media) return undefined;
  return { type: 'file', url: 'url' in media ? media.url : dataUrl(media), mediaType: media.mimeType };
}

/** The `data-toolnexus-approval` part of an approval's data: its id is the approval's, so a later one replaces it. */
export function approvalPart(data: ChatApprovalData): UIStreamPart {
  return { type: 'data-toolnexus-approval', id: data.id, data };
}

export function* requestParts(
  toolCallId: string,
  request: { id: string; kind: string; prompt: string; url?: string; data?: Record<string, unknown>; expiresAt?: string },
): Generator<UIStreamPart> {
  if (request.kind === 'approval') {
    // The prompt is what `useChat` shows as `part.approval.requestReason` ("Refund 2,500 to c-1?").
    yield { type: 'tool-approval-request', approvalId: request.id, toolCallId, reason: request.prompt };
    return;
  }
  const data: Extract<UIStreamPart, { type: 'data-toolnexus-request' }>['data'] = {
    id: request.id,
    toolCallId,
    kind: request.kind,
    prompt: request.prompt,
  };
  if (request.url !== undefined) data.url = request.url;
  if (request.data?.schema !== undefined) data.schema = request.data.schema;
  if (request.expiresAt !== undefined) data.expiresAt = request.expiresAt;
  yield { type: 'data-toolnexus-request', id: request.id, data };
}
