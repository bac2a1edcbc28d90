import { IsInt, Min } from 'class-validator';
import {
  Tool,
  Toolkit,
  answerFor,
  defineTool,
  pendingOf,
  type Answer,
  type PendingRequest,
  type ToolContext,
  type ToolMetricEvent,
} from 'toolnexus-ts';

class WireArgs {
  @IsInt() @Min(1) cents!: number;
}

const seen: Array<ToolContext | undefined> = [];

@Tool({ name: 'wire', description: 'Wires money', args: WireArgs, approval: true })
class WireTool {
  run(args: WireArgs, ctx?: ToolContext) {
    seen.push(ctx);
    return `wired ${args.cents}`;
  }
}

function replayOf(request: PendingRequest, answer: Answer, chain: Array<{ request: PendingRequest; answer: Answer }> = []): ToolContext {
  return { answer, replay: { request, chain } };
}

describe('declared approval (@Tool({ approval }))', () => {
  beforeEach(() => {
    seen.length = 0;
  });

  it("asks before run, marked as this tool's own request, and counts it as pending", async () => {
    const metrics: ToolMetricEvent[] = [];
    const toolkit = new Toolkit({ hooks: { onMetric: (event) => metrics.push(event) } }).register(WireTool);
    const asked = await toolkit.execute('wire', { cents: 500 });
    expect(pendingOf(asked)).toEqual({
      id: expect.stringMatching(/^pnd-/) as unknown,
      kind: 'approval',
      prompt: 'Approve wire {"cents":500}?',
      data: { approvalFor: 'wire' },
    });
    expect(seen).toEqual([]);
    expect(metrics).toEqual([expect.objectContaining({ tool: 'wire', pending: true, isError: false })]);
  });

  it('runs only with an ok answer to that very request, which run finds on ctx.approval', async () => {
    const toolkit = new Toolkit().register(WireTool);
    const request = pendingOf(await toolkit.execute('wire', { cents: 500 }))!;
    const answer: Answer = { id: request.id, ok: true, data: { approver: 'dana' } };
    expect(await toolkit.execute('wire', { cents: 500 }, replayOf(request, answer))).toEqual({ output: 'wired 500', isError: false });
    expect(seen[0]?.approval).toEqual(answer);
  });

  it("is not satisfied by a bare answer, a login, another tool's approval or an answer to another id", async () => {
    const toolkit = new Toolkit().register(WireTool);
    const login: PendingRequest = { id: 'pnd-login', kind: 'authorization', prompt: 'Sign in', url: 'https://sso.example.com' };
    const othersApproval: PendingRequest = {
      id: 'pnd-other',
      kind: 'approval',
      prompt: 'Approve delete?',
      data: { approvalFor: 'delete' },
    };
    const ownApproval: PendingRequest = { id: 'pnd-own', kind: 'approval', prompt: 'Approve wire?', data: { approvalFor: 'wire' } };
    const contexts: ToolContext[] = [
      { answer: { id: 'pnd-x', ok: true } },
      replayOf(login, { id: login.id, ok: true }),
      replayOf(othersApproval, { id: othersApproval.id, ok: true }),
      replayOf(ownApproval, { id: 'pnd-not-own', ok: true }),
    ];
    for (const ctx of contexts) expect(pendingOf(await toolkit.execute('wire', { cents: 500 }, ctx))?.kind).toBe('approval');
    expect(seen).toEqual([]);
  });

  it('finds the approval earlier in the chain when a later link answered a login', async () => {
    const toolkit = new Toolkit().register(WireTool);
    const approval: PendingRequest = { id: 'pnd-a', kind: 'approval', prompt: 'Approve?', data: { approvalFor: 'wire' } };
    const login: PendingRequest = { id: 'pnd-l', kind: 'authorization', prompt: 'Sign in' };
    const ctx = replayOf(login, { id: login.id, ok: true }, [
      { request: approval, answer: { id: approval.id, ok: true, data: { approver: 'dana' } } },
    ]);
    expect((await toolkit.execute('wire', { cents: 1 }, ctx)).output).toBe('wired 1');
    expect(seen[0]?.approval?.data).toEqual({ approver: 'dana' });
    expect(answerFor(ctx, 'approval')?.id).toBe('pnd-a');
    expect(answerFor(ctx, 'authorization')?.id).toBe('pnd-l');
    expect(answerFor(ctx, 'input')).toBeUndefined();
    expect(answerFor({ answer: { id: 'pnd-a', ok: true } }, 'approval')).toBeUndefined();
  });

  it('a declined approval handed in directly is a refusal, and run does not run', async () => {
    const toolkit = new Toolkit().register(WireTool);
    const request: PendingRequest = { id: 'pnd-d', kind: 'approval', prompt: 'Approve?', data: { approvalFor: 'wire' } };
    expect(await toolkit.execute('wire', { cents: 7 }, replayOf(request, { id: request.id, ok: false }))).toEqual({
      output: 'declined/expired: Approve wire {"cents":7}?',
      isError: true,
    });
    expect(seen).toEqual([]);
  });

  it('a policy decides per call and words the question; a throwing policy is an error result', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'refund',
        description: 'Refunds',
        args: WireArgs,
        approval: { when: (args: WireArgs) => args.cents > 100, prompt: (args: WireArgs) => `Refund ${args.cents}?`, expiresInMs: 60_000 },
        run: (args) => `refunded ${args.cents}`,
      }),
      defineTool({
        name: 'broken',
        description: 'Policy throws',
        approval: {
          when: () => {
            throw new Error('policy service down');
          },
        },
        run: () => 'never',
      }),
    );
    expect((await toolkit.execute('refund', { cents: 50 })).output).toBe('refunded 50');
    const asked = pendingOf(await toolkit.execute('refund', { cents: 500 }))!;
    expect(asked.prompt).toBe('Refund 500?');
    expect(Date.parse(asked.expiresAt as string) - Date.now()).toBeGreaterThan(50_000);
    expect(await toolkit.execute('broken', {})).toEqual({ output: 'the approval of broken failed: policy service down', isError: true });
  });
});
