/**
 * The descriptive @Tool options (title, annotations, output DTO) as the Toolkit reads them,
 * and the optional progress/log callbacks of the tool context. docs/mcp.md says what MCP makes of them.
 */
import 'reflect-metadata';
import { IsInt, IsString } from 'class-validator';
import { defineTool, Tool, Toolkit, type ToolContext } from '../../src';

class Out {
  @IsString()
  name!: string;

  @IsInt()
  count!: number;
}

describe('descriptive @Tool options', () => {
  it('records title, annotations and the output DTO’s schema on the registered tool', () => {
    @Tool({ description: 'Counts', title: 'Counter', annotations: { readOnlyHint: true, openWorldHint: false }, output: Out })
    class CountTool {
      run(): Out {
        return { name: 'n', count: 1 };
      }
    }
    const tool = new Toolkit().register(CountTool).get('count');
    expect(tool).toMatchObject({
      title: 'Counter',
      annotations: { readOnlyHint: true, openWorldHint: false },
      outputSchema: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } }, required: ['name', 'count'] },
    });
  });

  it('leaves tools that declare none exactly as before', () => {
    @Tool({ description: 'Plain' })
    class PlainTool {
      run() {
        return 'ok';
      }
    }
    const tool = new Toolkit().register(PlainTool).get('plain') as object;
    expect(Object.keys(tool).filter((key) => ['title', 'annotations', 'outputSchema'].includes(key))).toEqual([]);
  });

  it('takes a raw outputSchema on defineTool, and refuses bad declarations at registration', () => {
    const raw = defineTool({
      name: 'raw',
      description: 'Raw',
      outputSchema: { type: 'object', properties: { a: { type: 'string' } } },
      run: () => '{}',
    });
    expect(new Toolkit().register(raw).get('raw')?.outputSchema).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
    const both = defineTool({ name: 'both', description: 'Both', output: Out, outputSchema: { type: 'object' }, run: () => '' });
    expect(() => new Toolkit().register(both)).toThrow('tool "both" declares both output and outputSchema');
    const unknown = defineTool({ name: 'hint', description: 'Hint', annotations: { fastHint: true } as never, run: () => '' });
    expect(() => new Toolkit().register(unknown)).toThrow('tool "hint": unknown annotation fastHint');
    const notBool = defineTool({ name: 'hint2', description: 'Hint', annotations: { readOnlyHint: 'yes' } as never, run: () => '' });
    expect(() => new Toolkit().register(notBool)).toThrow('tool "hint2": annotation readOnlyHint must be a boolean');
  });

  it('hands ctx.progress and ctx.log to run untouched, through the deadline path too', async () => {
    const seen: string[] = [];
    const tool = defineTool({
      name: 'report',
      description: 'Reports',
      timeoutMs: 1000,
      run: (_args, ctx?: ToolContext) => {
        ctx?.progress?.(1, 2, 'half');
        ctx?.log?.('notice', 'hello', { a: 1 });
        return 'done';
      },
    });
    const result = await new Toolkit().register(tool).execute(
      'report',
      {},
      {
        progress: (progress, total, message) => seen.push(`progress ${progress}/${total} ${message}`),
        log: (level, message, data) => seen.push(`${level} ${message} ${JSON.stringify(data)}`),
      },
    );
    expect(result.output).toBe('done');
    expect(seen).toEqual(['progress 1/2 half', 'notice hello {"a":1}']);
  });
});
