/**
 * Typed final answers (`output`): OpenAI chat's native `response_format: json_schema` and
 * Anthropic's final-answer tool, over real HTTP on 127.0.0.1; validation by the same
 * class-validator path tool arguments take, repair rounds, exhausted repairs, and a halt
 * and resume that keeps asking for the same DTO.
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { InvalidArgumentError, Toolkit, defineTool, schemaForClass } from 'toolnexus-ts';
import { AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel } from 'toolnexus-ts/models';
import { AgentRunner, InvalidResumeError, OutputValidationError, type RunEvent } from 'toolnexus-ts/agents';
import type { MemoryStore } from 'toolnexus-ts/memory';
import {
  anthropicCalls,
  anthropicText,
  openaiCalls,
  openaiStream,
  openaiText,
  json,
  startMockServer,
  type MockServer,
  type Reply,
} from '../fixtures/runner/mock-servers';
import { PayTool, weatherToolkit } from '../fixtures/runner/tools';

class ReportDto {
  @IsString() title!: string;
  @IsInt() @Min(0) count!: number;
}

const servers: MockServer[] = [];
async function serve(replies: Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function openai(server: MockServer): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
}
function anthropic(server: MockServer): AnthropicModel {
  return new AnthropicModel({ baseUrl: server.url, apiKey: 'ak-output', model: 'claude-test', retry: { maxAttempts: 1 } });
}

type Wire = Array<{ role: string; content: unknown; tool_call_id?: string }>;

describe('typed answers through OpenAI chat structured output', () => {
  it('asks with response_format json_schema and returns the validated DTO instance', async () => {
    const server = await serve([openaiText('{"title":"Q3","count":4}')]);
    const runner = new AgentRunner({ model: openai(server), toolkit: weatherToolkit() });

    const result = await runner.run('Summarize', { output: ReportDto });

    expect(result.status).toBe('done');
    if (result.status !== 'done') return;
    const report: ReportDto = result.output; // typed by the DTO class, no cast
    expect(report).toBeInstanceOf(ReportDto);
    expect(report).toEqual({ title: 'Q3', count: 4 });
    expect(server.requests[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'ReportDto', schema: schemaForClass(ReportDto), strict: true },
    });
    expect((server.requests[0]?.body.tools as unknown[]).length).toBe(2); // no final-answer tool on the native path
  });

  it('feeds a validation failure back once and returns the repaired answer', async () => {
    const server = await serve([openaiText('{"title":"Q3","count":-1}'), openaiText('{"title":"Q3","count":1}')]);
    const result = await new AgentRunner({ model: openai(server), toolkit: weatherToolkit() }).run('Summarize', { output: ReportDto });

    expect(result).toMatchObject({ status: 'done', turns: 2, output: { title: 'Q3', count: 1 } });
    const wire = server.requests[1]?.body.messages as Wire;
    expect(wire.at(-2)).toEqual({ role: 'assistant', content: '{"title":"Q3","count":-1}' });
    expect(wire.at(-1)).toEqual({
      role: 'user',
      content:
        'Your answer is not valid ReportDto JSON: count: count must not be less than 0. Answer again with only the corrected JSON object.',
    });
  });

  it('throws OutputValidationError once the repairs run out, with the last problem and answer', async () => {
    const server = await serve([openaiText('not json'), openaiText('{"title":7}')]);
    const runner = new AgentRunner({ model: openai(server), toolkit: weatherToolkit(), maxOutputRepairs: 1 });

    const error = await runner.run('Summarize', { output: ReportDto, runId: 'run-bad' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(OutputValidationError);
    expect(error).toMatchObject({
      code: 'TOOLNEXUS_OUTPUT_INVALID',
      runId: 'run-bad',
      outputName: 'ReportDto',
      answer: '{"title":7}',
      attempts: 2,
    });
    expect((error as OutputValidationError).problem).toContain('title: title must be a string');
    expect((error as Error).message).toMatch(/^run run-bad: the model's answer is not a valid ReportDto after 2 attempts: /);
    expect(server.requests).toHaveLength(2);
  });

  it('validates a streamed answer the same way', async () => {
    const server = await serve([openaiStream(['{"title":', '"Streamed","count":2}'])]);
    const events: RunEvent[] = [];
    for await (const event of new AgentRunner({ model: openai(server), toolkit: weatherToolkit() }).stream('x', { output: ReportDto }))
      events.push(event);
    const done = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    expect(done.result).toMatchObject({ status: 'done', output: { title: 'Streamed', count: 2 } });
    expect(done.result.output).toBeInstanceOf(ReportDto);
  });

  it('keeps asking for the DTO across a halt: resume needs the class again, and refuses another one', async () => {
    const server = await serve([
      openaiCalls([{ id: 'call_pay', name: 'pay', args: { invoice: 'A', cents: 100 } }]),
      openaiText('{"title":"paid","count":1}'),
    ]);
    const runner = new AgentRunner({ model: openai(server), toolkit: new Toolkit().register(new PayTool()) });
    const halted = await runner.run('Pay A', { output: ReportDto, runId: 'run-typed' });
    expect(halted.status).toBe('halted');
    const state = await (runner.coordinator.store as MemoryStore).loadRun('run-typed');
    expect(state?.state.output).toEqual({ name: 'ReportDto', repairs: 0, maxRepairs: 2 });

    const answer = { id: halted.pending?.id as string, ok: true };
    await expect(runner.resume(answer)).rejects.toThrow(
      new InvalidResumeError('run run-typed asks for a typed answer (ReportDto): pass { output: ReportDto } to resume it'),
    );
    class OtherDto {
      @IsString() name!: string;
    }
    await expect(runner.resume(answer, { output: OtherDto })).rejects.toThrow(
      'run run-typed asks for a typed answer of ReportDto, not OtherDto',
    );
    expect(server.requests).toHaveLength(1);

    const final = await runner.resume(answer, { output: ReportDto });
    expect(final.status).toBe('done');
    if (final.status === 'done') expect(final.output).toEqual(Object.assign(new ReportDto(), { title: 'paid', count: 1 }));
    expect(server.requests[1]?.body.response_format).toMatchObject({ type: 'json_schema' });
    // The same answer again returns the finished run, its output rebuilt from the checkpoint.
    const again = await runner.resume(answer, { output: ReportDto });
    expect(again.status === 'done' && again.output).toBeInstanceOf(ReportDto);
    expect(again).toEqual(final);
  });
  it('a resumed run whose repairs run out is saved failed, and recover with the DTO asks again from the feedback', async () => {
    const server = await serve([
      openaiCalls([{ id: 'call_pay', name: 'pay', args: { invoice: 'B', cents: 5 } }]),
      openaiText('{"title":1}'),
      openaiText('{"title":"B","count":5}'),
    ]);
    const runner = new AgentRunner({ model: openai(server), toolkit: new Toolkit().register(new PayTool()), maxOutputRepairs: 0 });
    const halted = await runner.run('Pay B', { output: ReportDto, runId: 'run-recover' });
    const failed = await runner.resume({ id: halted.pending?.id as string, ok: true }, { output: ReportDto }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OutputValidationError);
    const saved = await (runner.coordinator.store as MemoryStore).loadRun('run-recover');
    expect(saved?.state).toMatchObject({ phase: 'failed', output: { name: 'ReportDto', repairs: 0 } });
    expect((saved?.state.messages as Array<{ role: string }>).at(-1)?.role).toBe('user');

    const recovered = await runner.recover('run-recover', { output: ReportDto });
    expect(recovered).toMatchObject({ status: 'done', output: { title: 'B', count: 5 }, turns: 3 });
    expect((server.requests[2]?.body.messages as Wire).at(-1)?.content).toMatch(/^Your answer is not valid ReportDto JSON: /);
  });
});

describe('typed answers through a final-answer tool (Anthropic)', () => {
  it('offers final_answer with the DTO schema, returns its validated arguments, and closes the call', async () => {
    const server = await serve([
      anthropicCalls([{ id: 'toolu_w', name: 'weather', args: { city: 'Lima' } }]),
      anthropicCalls([{ id: 'toolu_final', name: 'final_answer', args: { title: 'Lima', count: 1 } }]),
    ]);
    const result = await new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit() }).run('Report', { output: ReportDto });

    expect(result).toMatchObject({ status: 'done', turns: 2, output: { title: 'Lima', count: 1 } });
    expect(result.output).toBeInstanceOf(ReportDto);
    const tools = server.requests[0]?.body.tools as Array<{ name: string; input_schema: unknown }>;
    expect(tools.map((t) => t.name)).toEqual(['weather', 'fail', 'final_answer']);
    expect(tools[2]?.input_schema).toEqual(schemaForClass(ReportDto));
    expect(server.requests[0]?.body).not.toHaveProperty('response_format');
    expect(result.messages.at(-1)).toEqual({
      role: 'tool',
      callId: 'toolu_final',
      name: 'final_answer',
      content: 'Answer accepted.',
      isError: false,
    });
    expect(result.toolCalls.map((c) => c.name)).toEqual(['weather']);
  });

  it('repairs invalid final arguments through an error tool_result, and a text answer through a reminder', async () => {
    const server = await serve([
      anthropicText('It is sunny.'),
      anthropicCalls([{ id: 'toolu_1', name: 'final_answer', args: { title: 'x', count: 'many' } }]),
      anthropicCalls([{ id: 'toolu_2', name: 'final_answer', args: { title: 'x', count: 3 } }]),
    ]);
    const runner = new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit() });
    const result = await runner.run('Report', { output: ReportDto, maxOutputRepairs: 2 });

    expect(result).toMatchObject({ status: 'done', turns: 3, output: { title: 'x', count: 3 } });
    expect((server.requests[1]?.body.messages as Wire).at(-1)).toEqual({
      role: 'user',
      content: 'Give your final answer by calling final_answer with it as the arguments; a text answer is not taken.',
    });
    expect((server.requests[2]?.body.messages as Wire).at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content:
            'Your final_answer arguments are not a valid ReportDto: count: count must not be less than 0, count must be an integer number. Call final_answer again with corrected arguments.',
          is_error: true,
        },
      ],
    });
  });

  it('answers a final_answer asked beside other tools with an error, and takes it once it comes alone', async () => {
    const server = await serve([
      anthropicCalls([
        { id: 'toolu_w', name: 'weather', args: { city: 'Rome' } },
        { id: 'toolu_early', name: 'final_answer', args: { title: 'early', count: 0 } },
      ]),
      anthropicCalls([{ id: 'toolu_late', name: 'final_answer', args: { title: 'Rome', count: 1 } }]),
    ]);
    const result = await new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit() }).run('x', { output: ReportDto });
    expect(result).toMatchObject({ status: 'done', output: { title: 'Rome', count: 1 } });
    const results = (server.requests[1]?.body.messages as Wire).at(-1)?.content as Array<Record<string, unknown>>;
    expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ['toolu_w', false],
      ['toolu_early', true],
    ]);
  });

  it('throws OutputValidationError when the final arguments stay invalid', async () => {
    const server = await serve([anthropicCalls([{ id: 'toolu_1', name: 'final_answer', args: { title: 'x' } }])]);
    const runner = new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit(), maxOutputRepairs: 0 });
    await expect(runner.run('x', { output: ReportDto })).rejects.toThrow(OutputValidationError);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an output option it cannot serve', async () => {
    const server = await serve([anthropicText('x')]);
    const clash = new Toolkit().register(defineTool({ name: 'final_answer', description: 'mine', run: () => 'x' }));
    await expect(new AgentRunner({ model: anthropic(server), toolkit: clash }).run('x', { output: ReportDto })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(
      new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit() }).run('x', { output: 'ReportDto' as never }),
    ).rejects.toThrow('output must be a DTO class');
    expect(() => new AgentRunner({ model: anthropic(server), toolkit: weatherToolkit(), maxOutputRepairs: -1 })).toThrow(
      InvalidArgumentError,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('typed answers through the newer providers', () => {
  function responsesText(text: string): Reply {
    return json(200, {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      output: [
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
      ],
      usage: { input_tokens: 12, output_tokens: 6 },
    });
  }

  it('OpenAI Responses asks natively with text.format json_schema, and the runner repairs and returns the DTO', async () => {
    const server = await serve([responsesText('{"title":"Q3","count":-1}'), responsesText('{"title":"Q3","count":4}')]);
    const model = new OpenAIResponsesModel({
      baseUrl: `${server.url}/v1`,
      apiKey: 'sk-output',
      model: 'gpt-test',
      retry: { maxAttempts: 1 },
    });
    const result = await new AgentRunner({ model, toolkit: weatherToolkit() }).run('Summarize', { output: ReportDto });

    expect(result.status).toBe('done');
    if (result.status !== 'done') return;
    expect(result.output).toBeInstanceOf(ReportDto);
    expect(result.output).toEqual({ title: 'Q3', count: 4 });
    const first = server.requests[0]?.body as { text?: { format?: Record<string, unknown> }; tools: Array<{ name: string }> };
    expect(first.text?.format).toEqual({ type: 'json_schema', name: 'ReportDto', schema: schemaForClass(ReportDto), strict: false });
    expect(first.tools.map((t) => t.name)).not.toContain('final_answer');
    // The failed answer went back with the validator's words before the second request.
    expect(JSON.stringify(server.requests[1]?.body)).toContain('count must not be less than 0');
  });

  it('Gemini gets a final-answer tool and returns the validated DTO', async () => {
    const server = await serve([
      json(200, {
        candidates: [
          {
            content: { role: 'model', parts: [{ functionCall: { name: 'final_answer', args: { title: 'Q3', count: 4 } } }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5 },
      }),
    ]);
    const model = new GeminiModel({ baseUrl: server.url, apiKey: 'gk-output', model: 'gemini-2.5-flash', retry: { maxAttempts: 1 } });
    const result = await new AgentRunner({ model, toolkit: weatherToolkit() }).run('Report', { output: ReportDto });

    expect(result.status).toBe('done');
    if (result.status !== 'done') return;
    expect(result.output).toEqual({ title: 'Q3', count: 4 });
    const declarations = (server.requests[0]?.body as { tools: Array<{ functionDeclarations: Array<{ name: string }> }> }).tools[0]
      ?.functionDeclarations;
    expect(declarations?.map((d) => d.name)).toContain('final_answer');
  });
});
