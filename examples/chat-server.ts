/**
 * A chat back end for the AI SDK's useChat: a support bot whose `refund` tool needs
 * approval, its conversations kept in a SQLite file, served on 127.0.0.1 with `chatHandler`.
 * The "page" here is a few lines of fetch doing what useChat does: send the user's message,
 * read the UI message stream, answer the approval request, read the rest of the same
 * assistant message. The model is a scripted FunctionModel, so it runs offline.
 *
 *   npm run build:examples && node dist-examples/examples/chat-server.js
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, trimToTokens } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { chatHandler } from 'toolnexus-ts/chat';

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
}

let refunds = 0;

@Tool({
  name: 'refund',
  description: 'Refunds an order',
  args: RefundArgs,
  approval: { prompt: (a: RefundArgs) => `Refund ${a.cents} cents?` },
})
class RefundTool {
  run(args: RefundArgs) {
    refunds++;
    return success({ refunded: args.order, cents: args.cents });
  }
}

// Asks for the refund when told to; sums the result up once it is in.
const model = new FunctionModel(({ messages }) => {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return `Done: ${last.content}`;
  return { toolCalls: [{ id: 'call_1', name: 'refund', arguments: { order: 'o-42', cents: 1500 } }] };
});

/** What useChat does with a response: read the SSE parts. */
async function parts(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map((event) => event.replace(/^data: /, ''))
    .filter((data) => data !== '' && data !== '[DONE]')
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-example-'));
  const toolkit = new Toolkit().register(new RefundTool());
  const store = new SqliteStore(join(dir, 'chat.db'));
  const runner = new AgentRunner({
    model,
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store }),
    systemPrompt: 'You are a support bot.',
    beforeModel: trimToTokens({ maxTokens: 50_000 }),
  });
  // The host's auth says who asks; here everyone is "alice".
  const handler = chatHandler(runner, { principal: () => ({ id: 'alice' }) });
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
  const post = (messages: unknown[]) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'chat-1', messages }) });

  try {
    const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Please refund order o-42' }] };
    const first = await parts(await post([user]));
    const asked = first.find((p) => p.type === 'tool-approval-request') as { approvalId: string; toolCallId: string };
    const messageId = (first[0] as { messageId: string }).messageId;
    console.log(`the assistant asks to approve ${asked.toolCallId} (approval ${asked.approvalId}); refunds so far: ${refunds}`);

    // The user clicks "approve": useChat sends the assistant message with the tool part answered.
    const assistant = {
      id: messageId,
      role: 'assistant',
      parts: [
        {
          type: 'tool-refund',
          toolCallId: asked.toolCallId,
          state: 'approval-responded',
          input: { order: 'o-42', cents: 1500 },
          approval: { id: asked.approvalId, approved: true },
        },
      ],
    };
    const second = await parts(await post([user, assistant]));
    const output = second.find((p) => p.type === 'tool-output-available');
    const text = second
      .filter((p) => p.type === 'text-delta')
      .map((p) => p.delta as string)
      .join('');
    console.log(`same message: ${(second[0] as { messageId: string }).messageId === messageId}; output: ${JSON.stringify(output?.output)}`);
    console.log(`assistant: ${text}`);
    const session = await runner.sessions?.loadSession('alice:chat-1');
    console.log(`the session keeps ${session?.messages.length} messages; refunds: ${refunds}`);
    if (refunds !== 1 || session?.messages.length !== 4) throw new Error('the refund should have run once, the thread kept whole');
  } finally {
    server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
