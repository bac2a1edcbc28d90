/**
 * Every call the model makes takes one path, through the coordinator and the toolkit: hooks
 * and metrics see malformed JSON and inline-answered suspensions as they see any call.
 */
import { Toolkit, defineTool, pending, type ToolMetricEvent } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

function agent(waitFor?: ConstructorParameters<typeof AgentRunner>[0]['waitFor']) {
  const metrics: ToolMetricEvent[] = [];
  const after: string[] = [];
  const toolkit = new Toolkit({
    hooks: { onMetric: (event) => metrics.push(event), afterTool: ({ name, result }) => void after.push(`${name}: ${result.output}`) },
  }).register(
    defineTool({
      name: 'deploy',
      description: 'Deploys after approval',
      inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
      run: (args, ctx) =>
        ctx?.answer
          ? `deployed ${String(args.env)}`
          : pending({ kind: 'approval', prompt: `Deploy ${String(args.env)}?`, expiresAt: 'soon' }),
    }),
  );
  const model = new FunctionModel(({ messages }) => {
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length > 0) return results.map((m) => m.content).join(' | ');
    return {
      toolCalls: [
        { id: 'bad', name: 'deploy', arguments: '{"env": prod' },
        { id: 'good', name: 'deploy', arguments: { env: 'staging' } },
      ],
    };
  });
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit }), waitFor });
  return { runner, metrics, after };
}

describe('one path per call', () => {
  it("malformed JSON from the model reaches the toolkit: afterTool and onMetric fire, with the toolkit's words", async () => {
    const { runner, metrics, after } = agent((request) => ({ id: request.id, ok: true }));
    const result = await runner.run('deploy');
    expect(result.text).toMatch(/^invalid arguments for deploy: arguments are not valid JSON \(.+\): \{"env": prod \| /);
    expect(after[0]).toMatch(/^deploy: invalid arguments for deploy: arguments are not valid JSON/);
    expect(metrics.map((m) => [m.tool, m.isError, m.pending])).toEqual([
      ['deploy', true, false],
      ['deploy', false, true],
    ]);
  });

  it('an invalid expiresAt is refused the same way inline and durably: an error result, the tool never replays', async () => {
    const inline = agent((request) => ({ id: request.id, ok: true }));
    expect((await inline.runner.run('deploy')).text).toMatch(
      /\| suspension pnd-[\w-]+ has an invalid expiresAt "soon": expected an RFC 3339 instant$/,
    );
    const durable = agent();
    const result = await durable.runner.run('deploy');
    expect(result.status).toBe('done');
    expect(result.text).toMatch(/has an invalid expiresAt "soon"/);
  });
});
