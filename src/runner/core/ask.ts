import { withLoadedMedia } from './media';
import { ModelResponseError } from '../../errors';
import type { AssistantMessage, ChatModel, ModelRequest, ModelResponse } from '../../models/types';
import { traceChat } from './agent-spans';
import type { AgentParts, Emit, LiveRun } from './live-run';
import type { BeforeModel, ModelCall } from './transcript/hooks';
import { copyUsage } from './usage';

/** The model's next answer to the run's transcript, through the hooks, traced and metered. */
export async function ask(parts: AgentParts, live: LiveRun, emit: Emit | undefined = live.emit): Promise<ModelResponse> {
  let request: ModelRequest = { system: parts.systemPrompt, messages: live.messages.slice(), tools: live.tools, signal: live.signal };
  if (live.output?.native) request.output = live.output.format;
  let call: ModelCall | undefined;
  if (parts.beforeModel || parts.afterModel) {
    call = await hookedCall(parts.beforeModel, live, request);
    request = { ...call, signal: live.signal };
  }
  // Media kept by reference (past the bound for stored results) are shown to the model as bytes.
  const loaded = withLoadedMedia(parts.coordinator.content, request.messages);
  request.messages = loaded instanceof Promise ? await loaded : loaded;
  const { model } = parts;
  const started = performance.now();
  const streamed = emit !== undefined && typeof model.stream === 'function';
  const invoke = (): Promise<ModelResponse> => callModel(model, request, streamed, emit);
  let response = live.trace ? await traceChat(live.trace, parts.systemPrompt, request.messages, invoke) : await invoke();
  if (parts.afterModel && call) response = (await parts.afterModel(response, call)) ?? response;
  if (parts.onMetric) {
    // A metric sink that throws must not change (or fail) the run.
    try {
      parts.onMetric({
        event: 'model',
        provider: model.provider,
        runId: live.runId,
        turn: live.turns + 1,
        usage: copyUsage(response.usage),
        ms: performance.now() - started,
        streamed,
      });
    } catch {
      // dropped: the run goes on
    }
  }
  return response;
}

/** The model's turn as the transcript keeps it, with the provider items the next request must carry back. */
export function assistantTurn(response: ModelResponse): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: response.text };
  if (response.toolCalls.length > 0) message.toolCalls = response.toolCalls;
  if (response.items !== undefined && response.items.length > 0) message.items = response.items;
  return message;
}

/** One model call, streamed when someone listens and the model can. */
async function callModel(model: ChatModel, request: ModelRequest, streamed: boolean, emit: Emit | undefined): Promise<ModelResponse> {
  let response: ModelResponse | undefined;
  if (!streamed || !model.stream) {
    response = await model.complete(request);
    if (emit && response.text !== '') emit({ type: 'text', delta: response.text });
    return response;
  }
  for await (const event of model.stream(request)) {
    if (event.type === 'text') emit?.({ type: 'text', delta: event.delta });
    else if (event.type === 'reasoning') emit?.({ type: 'reasoning', delta: event.delta });
    else if (event.type === 'response') response = event.response;
  }
  if (!response) throw new ModelResponseError(model.provider, 'the stream ended without a response');
  return response;
}

/** The request as `beforeModel` gets it (a copy of the transcript) and as it returned it. */
async function hookedCall(beforeModel: BeforeModel | undefined, live: LiveRun, request: ModelRequest): Promise<ModelCall> {
  const call: ModelCall = { runId: live.runId, turn: live.turns + 1, messages: structuredClone(live.messages), tools: request.tools };
  if (request.system !== undefined) call.system = request.system;
  if (request.output) call.output = request.output;
  if (!beforeModel) return call;
  const changed = (await beforeModel(call)) ?? call;
  if (typeof changed !== 'object' || changed === null || !Array.isArray(changed.messages) || !Array.isArray(changed.tools))
    throw new ModelResponseError('beforeModel', 'the hook returned something that is not a model request { messages, tools }');
  return changed;
}
