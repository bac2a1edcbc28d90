/**
 * toolnexus-ts/langchain (docs/interop.md): a Toolkit's tools in a LangGraph graph. The
 * declared approval raises LangGraph's interrupt() with the request; the graph is resumed
 * with Command({ resume: answer }) — then resumed again from the same interrupted checkpoint,
 * as a retried worker might — and the tool runs once through the ResumeCoordinator.
 * Runs offline: the model is a stand-in LangChain chat model that asks for the refund, then
 * says what it saw; any LangChain chat model (ChatOpenAI, ChatAnthropic...) fits in its place.
 */
import 'reflect-metadata';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { IsInt, IsString, Min } from 'class-validator';
import { ResumeCoordinator, Tool, Toolkit } from 'toolnexus-ts';
import { langchainTools, type LangChainInterruptValue } from 'toolnexus-ts/langchain';

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
}

@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: true })
class RefundTool {
  runs = 0;
  run(args: RefundArgs): string {
    this.runs++;
    return `refunded ${args.cents} cents on ${args.order}`;
  }
}

/** The stand-in model: asks for the refund, then reports the tool's answer. */
class StandInModel extends BaseChatModel {
  _llmType(): string {
    return 'stand-in';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const results = messages.filter((m) => m.getType() === 'tool').map((m) => m.text);
    const message =
      results.length > 0
        ? new AIMessage(`Done: ${results.join('; ')}`)
        : new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'refund', args: { order: 'A-1', cents: 500 } }] });
    return { generations: [{ text: message.text, message }] };
  }
}

async function main(): Promise<void> {
  const refund = new RefundTool();
  // A durable store (SqlitePendingStore, PostgresPendingStore) lets another process answer.
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(refund) });
  const tools = langchainTools(coordinator, { answeredBy: { id: 'user:ann' } });
  const model = new StandInModel({});

  // LangGraph's prebuilt ToolNode (@langchain/langgraph/prebuilt) does the same as this node.
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', async (state) => {
      const last = state.messages[state.messages.length - 1] as AIMessage;
      const calls = last.tool_calls ?? [];
      const invoked = calls.map(async (call) => {
        const tool = tools.find((t) => t.name === call.name);
        if (!tool) throw new Error(`no tool named ${call.name}`);
        return tool.invoke({ ...call, type: 'tool_call' });
      });
      return { messages: await Promise.all(invoked) };
    })
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => ((state.messages[state.messages.length - 1] as AIMessage).tool_calls?.length ? 'tools' : END))
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() });

  const thread = { configurable: { thread_id: 'order-A-1' } };
  await graph.invoke({ messages: [new HumanMessage('Refund order A-1')] }, thread);
  const interrupted = await graph.getState(thread);
  const request = interrupted.tasks.flatMap((t) => t.interrupts)[0]?.value as LangChainInterruptValue;
  console.log('interrupted:', request.kind, '-', request.prompt);

  const answer = { id: request.id, ok: true };
  const first = await graph.invoke(new Command({ resume: answer }), thread);
  console.log('resumed:', first.messages[first.messages.length - 1]?.text);
  // The interrupted checkpoint resumed once more: the stored outcome, no second refund.
  const again = await graph.invoke(new Command({ resume: answer }), { configurable: { ...interrupted.config.configurable } });
  console.log('resumed again:', again.messages[again.messages.length - 1]?.text);
  console.log('refund ran', refund.runs, 'time(s)');
  if (refund.runs !== 1) throw new Error('the approved refund ran more than once');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
