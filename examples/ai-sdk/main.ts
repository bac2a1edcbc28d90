/**
 * toolnexus-ts/ai-sdk both ways (docs/interop.md): a Toolkit's tools in the AI SDK's own
 * generateText loop, a declared approval answered through the AI SDK's approval flow and run
 * once through the ResumeCoordinator; then the same model driven by our AgentRunner through
 * AiSdkModel. Runs offline against a stand-in model on 127.0.0.1.
 */
import 'reflect-metadata';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { IsInt, IsString, Min } from 'class-validator';
import { Tool, Toolkit, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { AgentRunner } from 'toolnexus-ts/agents';
import { AiSdkModel, aiSdkToolApproval, aiSdkTools, recordDeclines } from 'toolnexus-ts/ai-sdk';
import { startMockModel } from './mock-model';

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
}

@Tool({
  name: 'refund',
  description: 'Refunds an order',
  args: RefundArgs,
  approval: { prompt: (a: RefundArgs) => `Refund ${a.cents} cents?` },
})
class RefundTool {
  runs = 0;
  run(args: RefundArgs, ctx?: ToolContext): string {
    this.runs++;
    return `refunded ${args.cents} cents on ${args.order} (approved by ${ctx?.approval?.answeredBy?.id ?? '?'})`;
  }
}

async function main(): Promise<void> {
  const { url, server } = await startMockModel();
  try {
    const refund = new RefundTool();
    const toolkit = new Toolkit().register(refund);
    // A durable store (SqliteStore, PostgresStore) makes the approval survive a restart.
    const coordinator = new ResumeCoordinator({ toolkit });
    const model = createOpenAI({ baseURL: url, apiKey: 'not-needed-offline' }).chat('example-model');

    // 1. The AI SDK's loop with our tools: the model asks, the AI SDK asks for approval;
    //    with toolApproval from aiSdkToolApproval, the request carries our prompt as its reason.
    const messages: ModelMessage[] = [{ role: 'user', content: 'Refund order A-1' }];
    const asking = aiSdkTools(coordinator);
    const first = await generateText({ model, tools: asking, toolApproval: aiSdkToolApproval(asking), messages, stopWhen: stepCountIs(3) });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    if (request?.type !== 'tool-approval-request') throw new Error('expected an approval request');
    console.log('approval asked for', request.toolCall.toolName, '-', request.reason);

    // 2. The human approves through the AI SDK's own response part; sent twice, it runs once.
    messages.push(...first.responseMessages, {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
    });
    const tools = aiSdkTools(coordinator, { approvedBy: { id: 'user:dana' } });
    await recordDeclines(messages, coordinator); // none here: a declined one would be settled as declined
    for (let i = 0; i < 2; i++) {
      const answered = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
      console.log('model says:', answered.text);
    }
    console.log('refund ran', refund.runs, 'time(s)');
    if (refund.runs !== 1) throw new Error('the approved refund ran more than once');

    // 3. The other way round: our AgentRunner driving the AI SDK model.
    const runner = new AgentRunner({ model: new AiSdkModel(model), toolkit, coordinator });
    const halted = await runner.run('Refund order A-1');
    console.log('runner halted on:', halted.pending?.prompt);
    const done = await runner.resume({ id: halted.pending?.id ?? '', ok: true });
    console.log('runner:', done.status, done.text);
  } finally {
    server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
