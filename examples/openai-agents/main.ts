/**
 * toolnexus-ts/openai-agents (docs/interop.md): a Toolkit's tools in the OpenAI Agents SDK's
 * Runner; the declared approval interrupts the run, the RunState is serialised, restored and
 * approved (twice, as two workers might), and the tool runs once through the ResumeCoordinator.
 * Runs offline against a stand-in model on 127.0.0.1.
 */
import 'reflect-metadata';
import { Agent, OpenAIProvider, RunState, Runner, setTracingDisabled } from '@openai/agents';
import { IsInt, IsString, Min } from 'class-validator';
import { Tool, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { openAIAgentsTools } from 'toolnexus-ts/openai-agents';
import { startMockModel } from '../ai-sdk/mock-model';

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

async function main(): Promise<void> {
  setTracingDisabled(true);
  const { url, server } = await startMockModel();
  try {
    const refund = new RefundTool();
    // A durable store (SqliteStore, PostgresStore) lets another process approve.
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(refund) });
    const agent = new Agent({
      name: 'clerk',
      instructions: 'Use the tools.',
      model: 'example-model',
      tools: openAIAgentsTools(coordinator),
    });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: url, apiKey: 'not-needed-offline', useResponses: false }) });

    const first = await runner.run(agent, 'Refund order A-1');
    console.log(
      'interrupted for:',
      first.interruptions.map((i) => i.name),
    );
    const saved = first.state.toString();

    for (const worker of ['worker 1', 'worker 2']) {
      const state = await RunState.fromString(agent, saved);
      for (const interruption of state.getInterruptions()) state.approve(interruption);
      const result = await runner.run(agent, state);
      console.log(`${worker}:`, result.finalOutput);
    }
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
