/**
 * `npm run inbox`: the approvals inbox on 127.0.0.1 with work waiting in it. A scripted agent
 * run halts on a transfer that needs approval (its IBAN is `@Sensitive()`: the page redacts it),
 * another asks for shipping details through a form. Open the printed URL, sign in with the
 * printed token, approve or decline: the run resumes in this process. Ctrl-C stops it.
 * (Not run by `npm run examples`, since it serves until stopped; test/inbox/demo.test.ts runs it.)
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Sensitive, Tool, Toolkit, failure, pending, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { bearerToken, createInbox } from 'toolnexus-ts/inbox';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Sensitive() @Describe('IBAN to credit') toIban!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

@Tool({ name: 'transfer', description: 'Move money to an IBAN, with approval', args: TransferArgs })
class TransferTool {
  run(args: TransferArgs, ctx?: ToolContext) {
    if (ctx?.replay?.request.kind !== 'approval') {
      return pending({
        kind: 'approval',
        prompt: `Transfer ${(args.amount / 100).toFixed(2)} EUR from ${args.from} to ${args.toIban}?`,
        data: { requestedBy: 'agent invoice-bot' },
        expiresAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
      });
    }
    return ctx.answer?.ok ? success(`moved ${args.amount} cents from ${args.from}`) : failure('transfer declined');
  }
}

class ShippingArgs {
  @IsString() order!: string;
}

@Tool({ name: 'shipping', description: 'Ask for the shipping details of an order', args: ShippingArgs })
class ShippingTool {
  run(args: ShippingArgs, ctx?: ToolContext) {
    if (ctx?.replay?.request.kind !== 'input') {
      return pending({
        kind: 'input',
        prompt: `Shipping details for order ${args.order}`,
        data: {
          schema: {
            type: 'object',
            properties: {
              parcels: { type: 'integer', title: 'Parcels', minimum: 1, maximum: 20 },
              carrier: { type: 'string', title: 'Carrier', enum: ['DHL', 'UPS', 'Post'] },
              insured: { type: 'boolean', title: 'Insured' },
            },
            required: ['parcels', 'carrier'],
          },
        },
      });
    }
    return ctx.answer?.ok ? success(ctx.answer.data ?? {}) : failure('no shipping details');
  }
}

/** A scripted stand-in for a chat model, so the demo runs offline. */
function scriptedModel(): FunctionModel {
  return new FunctionModel(({ messages }) => {
    const last = messages[messages.length - 1];
    if (last?.role === 'tool') return last.isError ? `Stopped: ${last.content}` : `Done: ${last.content}`;
    const text = last?.role === 'user' ? last.content : '';
    if (text.startsWith('pay'))
      return { toolCalls: [{ name: 'transfer', arguments: { from: 'acc-ops', toIban: 'DE89370400440532013000', amount: 250_000 } }] };
    return { toolCalls: [{ name: 'shipping', arguments: { order: 'ORD-1042' } }] };
  });
}

export interface DemoInbox {
  url: string;
  token: string;
  runner: AgentRunner;
  close(): Promise<void>;
}

/** Starts the demo: two halted runs, and the inbox over their runner on 127.0.0.1. */
export async function startDemoInbox(port = 0): Promise<DemoInbox> {
  const toolkit = new Toolkit().register(TransferTool).register(ShippingTool);
  const runner = new AgentRunner({ model: scriptedModel(), toolkit, coordinator: new ResumeCoordinator({ toolkit }) });
  await runner.run('pay the hosting invoice');
  await runner.run('ship order 1042');
  const token = process.env.TOOLNEXUS_INBOX_TOKEN || randomBytes(18).toString('base64url');
  const inbox = createInbox({ runner, authorize: bearerToken(token, { id: 'demo', name: 'Demo Approver' }), basePath: '/inbox' });
  const server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/inbox/`;
  return {
    url,
    token,
    runner,
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function main(): Promise<void> {
  const demo = await startDemoInbox(Number(process.env.PORT ?? 0));
  console.log(`Approvals inbox: ${demo.url}`);
  console.log(`Sign in with the token: ${demo.token}`);
  console.log('Two runs wait in it: a transfer to approve or decline, and a shipping form. Ctrl-C stops the demo.');
  const stop = () => void demo.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) void main();
