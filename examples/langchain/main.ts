/**
 * toolnexus-ts/langchain (docs/interop.md): a Toolkit's tools in a LangGraph graph whose model
 * is LangChain's ChatOpenAI. The declared approval raises LangGraph's interrupt() with the
 * request; the graph is resumed with Command({ resume: answer }) — then resumed again from the
 * same interrupted checkpoint, as a retried worker might — and the tool runs once through the
 * ResumeCoordinator. Runs offline: ChatOpenAI's `baseURL` points at a stand-in for an
 * OpenAI-compatible API on 127.0.0.1; point it at a real provider and nothing else changes.
 */
import 'reflect-metadata';
import { HumanMessage } from '@langchain/core/messages';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { IsInt, IsString, Min } from 'class-validator';
import { Tool, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { langchainTools, type LangChainInterruptValue } from 'toolnexus-ts/langchain';
import { startMockModel } from '../ai-sdk/mock-model';

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
}

@Tool({
  name: 'refund',
  description: 'Refunds an order',
  args: RefundArgs,
  approval: { prompt: (a: RefundArgs) => `Refund ${a.cents} cents on ${a.order}?` },
})
class RefundTool {
  runs = 0;
  run(args: RefundArgs): string {
    this.runs++;
    return `refunded ${args.cents} cents on ${args.order}`;
  }
}

async function main(): Promise<void> {
  const { url, server } = await startMockModel();
  try {
    const refund = new RefundTool();
    // A durable store (SqliteStore, PostgresStore) lets another process answer.
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(refund) });
    const tools = langchainTools(coordinator, { answeredBy: { id: 'user:ann' } });
    const llm = new ChatOpenAI({ model: 'example-model', apiKey: 'not-needed-offline', configuration: { baseURL: url } }).bindTools(tools);

    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
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
  } finally {
    server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
