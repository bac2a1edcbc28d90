import { A2A_IDEMPOTENCY_METADATA } from '../idempotency';
import type { AgentCard, Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { messageOf } from '../../errors/message';
import { failure, pending, sanitizeName, success } from '../../results/helpers';
import type { JsonSchema } from '../../results/json-schema';
import type { Answer, ToolResult } from '../../results/wire';
import { sleep } from '../../timing/sleep';
import type { ToolContext } from '../../toolkit/context';
import { defineTool, type FunctionTool } from '../../toolkit/define-tool';
import { SecretRedactor } from '../../mcp/client/redactor';
import { A2AAgentError } from './errors';
import { boundedFetch, expandHeaders } from './fetch';
import { agentSettings, type A2AAgentSettings, type A2AAgentToolOptions } from './options';
import { a2aSdk, type A2ASdk } from './peer';
import { askedSchema, FINAL_STATES, outputOf, partsText, REPLY_SCHEMA, stateName, statusText } from './task';

/** What a request of this tool keeps of the remote task in its `data.a2a`: enough to answer on it from any process. */
export interface A2ATaskRef {
  agent: string;
  taskId: string;
  contextId: string;
}

/** The arguments the model gives an agent tool: the task in words, and optional structured data sent with it. */
const TASK_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'The task to send to the agent, in natural language.' },
    data: { type: 'object', description: 'Structured data sent with the task, when the agent takes it.' },
  },
  required: ['task'],
  additionalProperties: false,
};

/**
 * A remote A2A agent as a tool (docs/a2a.md, "A remote A2A agent as a tool"): the model's task
 * is sent as a message, the task followed until it ends, and its artifacts are the result.
 * When the agent asks for input (`input-required`) the call suspends with a request of kind
 * `input` carrying the agent's question and the task's ids, so the wait is durable and
 * answered like any other (inbox, chat, CLI, `coordinator.resolve`); the replay sends the
 * answer on the same task and goes on to its end, or suspends again if the agent asks again.
 *
 * The card is read (from `url`: `.well-known/agent-card.json` under its path, else at its host's root) when the tool is made: a
 * card that cannot be read throws {@link A2AAgentError}. Header values never appear in a
 * result, an error or a stored row.
 */
export async function a2aAgentTool(options: A2AAgentToolOptions): Promise<FunctionTool> {
  const settings = agentSettings(options);
  const { sdk, client: sdkClient } = a2aSdk();
  // A value with a `${VAR}` is a template, not a secret: what it expands to is added when it is read.
  const redactor = new SecretRedactor(Object.values(settings.headers).filter((value) => !value.includes('${')));
  const origins = new Set([...(settings.url !== undefined ? [new URL(settings.url).origin] : []), ...(settings.headerOrigins ?? [])]);
  const fetch = boundedFetch({
    fetch: settings.fetch,
    headers: () => expandHeaders(settings.headers, settings.env, redactor),
    maxResponseBytes: settings.maxResponseBytes,
    timeoutMs: settings.timeoutMs,
    origins,
  });
  // An agent still on A2A 0.3 (its card has `url` and `protocolVersion: '0.3…'`) is spoken to in 0.3 by the SDK.
  const legacyCompat = { enabled: true };
  const resolver = new sdkClient.DefaultAgentCardResolver({ fetchImpl: fetch, legacyCompat });
  let card: AgentCard;
  try {
    card = settings.card !== undefined ? resolver.normalizeAgentCard(settings.card) : await resolveCard(resolver, settings.url as string);
  } catch (error) {
    throw new A2AAgentError(`the A2A agent card could not be read: ${redactor.text(messageOf(error))}`);
  }
  if (typeof card?.name !== 'string' || card.name === '') throw new A2AAgentError('the A2A agent card has no name');
  // A card the host gave is the host's word: the endpoints it names may have the headers.
  if (settings.card !== undefined) for (const endpoint of endpointsOf(card)) origins.add(endpoint);
  const factory = new sdkClient.ClientFactory(
    sdkClient.ClientFactoryOptions.createFrom(sdkClient.ClientFactoryOptions.default, {
      transports: [
        new sdkClient.JsonRpcTransportFactory({ fetchImpl: fetch, legacyCompat }),
        new sdkClient.RestTransportFactory({ fetchImpl: fetch, legacyCompat }),
      ],
      cardResolver: resolver,
    }),
  );
  let client: Client;
  try {
    client = await factory.createFromAgentCard(card);
  } catch (error) {
    throw new A2AAgentError(`the A2A agent ${card.name} offers no transport this client speaks: ${redactor.text(messageOf(error))}`);
  }
  const agent = card.name;
  const calls = new AgentCalls(
    sdk,
    client,
    agent,
    settings,
    redactor,
    settings.push !== undefined && card.capabilities?.pushNotifications === true,
  );
  return defineTool({
    name: settings.name ?? sanitizeName(agent).slice(0, 64),
    description: settings.description ?? describe(card),
    inputSchema: TASK_SCHEMA,
    run: (args, ctx) => calls.run(args, ctx),
  });
}

/** The origins of a card's endpoints (A2A 1.0's `supportedInterfaces`, 0.3's `url`). */
function endpointsOf(card: AgentCard): string[] {
  const raw = card as AgentCard & { url?: unknown };
  const urls = [...(Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces.map((item) => item?.url) : []), raw.url];
  const out: string[] = [];
  for (const url of urls) {
    if (typeof url !== 'string') continue;
    try {
      out.push(new URL(url).origin);
    } catch {
      // not a URL: the SDK refuses it when it picks a transport
    }
  }
  return out;
}

/**
 * A URL naming a JSON file is the card itself. Any other is the agent's base: its card is at the
 * well-known path under it (`<url>/.well-known/agent-card.json`, where an agent mounted at a
 * path serves it), else at the host's root (the spec's place, and where the SDK's resolver looks
 * for a base without a trailing slash). Under the path first: on a host of several agents, the
 * root's card may be another's.
 */
async function resolveCard(resolver: { resolve(base: string, path?: string): Promise<AgentCard> }, url: string): Promise<AgentCard> {
  const under = new URL(url);
  if (under.pathname.endsWith('.json')) return resolver.resolve(url, '');
  if (under.pathname.endsWith('/')) return resolver.resolve(url);
  under.pathname += '/';
  try {
    return await resolver.resolve(under.href);
  } catch {
    return resolver.resolve(url);
  }
}

/** The id of this tool's push config on a task: each call's replaces the last's (a task keeps a few at most). */
const PUSH_CONFIG_ID = 'toolnexus-agent-tool';

/** Most skills a default description lists, and its longest text: a card is the agent's to write. */
const MAX_DESCRIBED_SKILLS = 20;
const MAX_DESCRIPTION_CHARS = 4_000;

function describe(card: AgentCard): string {
  // A card read as JSON may lack what the SDK's type promises.
  const all = Array.isArray(card.skills) ? card.skills : [];
  const skills = all
    .slice(0, MAX_DESCRIBED_SKILLS)
    .map((skill) => `- ${skill.name || skill.id}${skill.description ? `: ${skill.description}` : ''}`);
  if (all.length > MAX_DESCRIBED_SKILLS) skills.push(`- (${all.length - MAX_DESCRIBED_SKILLS} more)`);
  const text = [card.description || `The A2A agent ${card.name}`, ...(skills.length > 0 ? ['Skills:', ...skills] : [])].join('\n');
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
}

/** One agent's calls: send, follow the task, and turn where it stopped into a result. */
class AgentCalls {
  constructor(
    private readonly sdk: A2ASdk,
    private readonly client: Client,
    private readonly agent: string,
    private readonly settings: A2AAgentSettings,
    private readonly redactor: SecretRedactor,
    /** Whether the agent's card offers push notifications (and the host gave a receiver). */
    private readonly pushes: boolean,
  ) {}

  async run(args: Record<string, unknown>, ctx: ToolContext | undefined): Promise<ToolResult> {
    const clock = this.settings.clock;
    const started = clock.now();
    const deadline = started + this.settings.timeoutMs;
    const asked = taskRefOf(ctx);
    const progress = { taskId: asked?.taskId ?? '', state: asked ? 'input-required' : 'submitted', polls: 0 };
    const meta = (): Record<string, unknown> => ({ agent: this.agent, ...progress, ms: clock.now() - started });
    const timer = new AbortController();
    const handle = clock.setTimeout(() => timer.abort(), this.settings.timeoutMs);
    const signal = ctx?.signal ? AbortSignal.any([ctx.signal, timer.signal]) : timer.signal;
    // Told by push when the agent offers it: the task's first send does not wait, and a notification
    // ends each wait. An answer's send waits for the agent as without push: its push config would be
    // set by whoever answers, on a task that is another's (the agent keeps configs for the owner only).
    const watch = this.pushes && !asked ? this.settings.push?.watch() : undefined;
    try {
      const message = asked ? this.answerMessage(asked, ctx as ToolContext) : this.taskMessage(args, ctx);
      const configuration = watch
        ? { returnImmediately: true, taskPushNotificationConfig: { id: PUSH_CONFIG_ID, url: this.settings.push?.url, token: watch.token } }
        : undefined;
      const sent = await this.client.sendMessage(this.sdk.SendMessageRequest.fromJSON({ message, configuration }), { signal });
      if (isMessage(sent)) return this.redactor.deep(success(this.replyText(sent), meta()));
      let task: Task = sent;
      progress.taskId = task.id;
      progress.state = stateName(this.sdk, task);
      while (!FINAL_STATES.has(progress.state)) {
        if (clock.now() >= deadline) break;
        const pause = Math.min(this.settings.pollEveryMs, Math.max(0, deadline - clock.now()));
        await (watch ? watch.wait(pause, signal) : sleep(pause, signal, clock));
        if (signal.aborted) break;
        task = await this.client.getTask(this.sdk.GetTaskRequest.fromJSON({ id: task.id }), { signal });
        progress.polls++;
        progress.state = stateName(this.sdk, task);
      }
      return this.redactor.deep(this.resultOf(task, progress.state, ctx, meta, started));
    } catch (error) {
      if (ctx?.signal?.aborted) return failure(`${taskLabel(progress.taskId)} canceled`, meta());
      if (timer.signal.aborted) return this.timedOut(progress, meta());
      const said = error instanceof A2AAgentError ? error.message : messageOf(error);
      return failure(`A2A agent ${this.agent}: ${this.redactor.text(said)}`, meta());
    } finally {
      watch?.close();
      clock.clearTimeout(handle);
    }
  }

  private resultOf(
    task: Task,
    state: string,
    ctx: ToolContext | undefined,
    meta: () => Record<string, unknown>,
    started: number,
  ): ToolResult {
    const { maxParts } = this.settings;
    if (state === 'completed') return success(outputOf(task, maxParts), meta());
    if (state === 'input-required') {
      const ref: A2ATaskRef = { agent: this.agent, taskId: task.id, contextId: task.contextId };
      return pending({
        kind: 'input',
        prompt: statusText(task, maxParts) || `The A2A agent ${this.agent} asks for input`,
        // `followUp`: the agent asked again on the task the last answer went to; the chain may repeat the kind.
        data: { a2a: ref, schema: askedSchema(task) ?? REPLY_SCHEMA, ...(taskRefOf(ctx) ? { followUp: true } : {}) },
      });
    }
    const detail = statusText(task, maxParts);
    if (state === 'auth-required')
      return failure(
        `A2A task ${task.id} auth-required${detail ? `: ${detail}` : ''} (this tool does not sign in to A2A agents: give the agent's credentials in its headers)`,
        meta(),
      );
    if (FINAL_STATES.has(state)) return failure(`A2A task ${task.id} ${state}${detail ? `: ${detail}` : ''}`, meta());
    if (ctx?.signal?.aborted) return failure(`A2A task ${task.id} canceled`, meta());
    return this.timedOut({ taskId: task.id, state }, { ...meta(), ms: this.settings.clock.now() - started });
  }

  private timedOut(progress: { taskId: string; state: string }, metadata: Record<string, unknown>): ToolResult {
    return failure(`${taskLabel(progress.taskId)} timed out after ${this.settings.timeoutMs}ms (state=${progress.state})`, metadata);
  }

  /** The model's task as a user message: a text part, and a data part when it gave data. */
  private taskMessage(args: Record<string, unknown>, ctx: ToolContext | undefined): Record<string, unknown> {
    const parts: Array<Record<string, unknown>> = [{ text: typeof args.task === 'string' ? args.task : '' }];
    if (isRecord(args.data)) parts.push({ data: args.data });
    // A call's idempotency key names its message, so an agent that drops repeated messages drops a
    // retried one, and goes in its metadata, where a toolnexus agent deduplicates on it.
    const key = ctx?.idempotencyKey;
    if (key === undefined) return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts };
    return { messageId: key, role: 'ROLE_USER', parts, metadata: { [A2A_IDEMPOTENCY_METADATA]: key } };
  }

  /**
   * The person's answer as a message on the task that asked: its `text` as a text part, any
   * other field as a data part. The message is named after the request it answers, so a
   * replay taken over after its holder died sends the same message id again.
   */
  private answerMessage(ref: A2ATaskRef, ctx: ToolContext): Record<string, unknown> {
    const answer = ctx.answer as Answer;
    const { text, ...rest } = answer.data ?? {};
    const parts: Array<Record<string, unknown>> = [];
    if (typeof text === 'string') parts.push({ text });
    if (Object.keys(rest).length > 0 || parts.length === 0)
      parts.push({ data: text === undefined || typeof text === 'string' ? rest : answer.data });
    return { messageId: answer.id, role: 'ROLE_USER', taskId: ref.taskId, contextId: ref.contextId, parts };
  }

  private replyText(message: Message): string {
    return partsText(message.parts, this.settings.maxParts);
  }
}

/** Upstream's name of a task in a result; a task the agent held the send open on has no id yet. */
function taskLabel(taskId: string): string {
  return taskId === '' ? 'A2A task' : `A2A task ${taskId}`;
}

/** The remote task a replay answers: the request this tool made, carrying `data.a2a`, answered ok. */
function taskRefOf(ctx: ToolContext | undefined): A2ATaskRef | undefined {
  const request = ctx?.replay?.request;
  if (!request || request.kind !== 'input' || !ctx?.answer?.ok || ctx.answer.id !== request.id) return undefined;
  const ref = request.data?.a2a;
  if (!isRecord(ref) || typeof ref.taskId !== 'string' || typeof ref.contextId !== 'string' || typeof ref.agent !== 'string')
    return undefined;
  return { agent: ref.agent, taskId: ref.taskId, contextId: ref.contextId };
}

function isMessage(value: Message | Task): value is Message {
  return 'messageId' in value && !('status' in value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
