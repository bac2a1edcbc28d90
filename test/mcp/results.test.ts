/** Results across MCP (src/mcp/server/results.ts, src/mcp/client/results.ts): a Toolkit result as an MCP result, and an MCP result as a ToolResult, bounded. */
import { failure, success, withContent } from '../../src';
import { fromMcpResult } from '../../src/mcp/client/results';
import { toMcpResult } from '../../src/mcp/server/results';

describe('toMcpResult', () => {
  it('sends output as text, rich content as it is, and the object as structuredContent when an output schema is declared', () => {
    expect(toMcpResult(success('hi'), undefined)).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    const image = withContent('a pixel', [{ type: 'image', data: 'AA==', mimeType: 'image/png' }]);
    expect(toMcpResult(image, undefined)).toEqual({ content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] });
    expect(toMcpResult(success({ a: 1 }), { type: 'object' })).toEqual({
      content: [{ type: 'text', text: '{"a":1}' }],
      structuredContent: { a: 1 },
    });
    expect(toMcpResult(success('not an object'), { type: 'object' })).toEqual({
      content: [{ type: 'text', text: 'the tool declares an output schema but did not return a JSON object' }],
      isError: true,
    });
    expect(toMcpResult(failure('boom'), { type: 'object' })).toEqual({ content: [{ type: 'text', text: 'boom' }], isError: true });
  });
});

describe('fromMcpResult', () => {
  it('joins text as output and keeps other content and structuredContent on metadata', () => {
    const result = fromMcpResult(
      {
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
          { type: 'text', text: 'two' },
        ],
        structuredContent: { n: 2 },
      },
      1000,
    );
    expect(result).toEqual({
      output: 'one\ntwo',
      isError: false,
      metadata: {
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
          { type: 'text', text: 'two' },
        ],
        structuredContent: { n: 2 },
      },
    });
    expect(fromMcpResult({ content: [], isError: true }, 1000)).toEqual({ output: 'the MCP tool failed without a message', isError: true });
  });

  it("joins an error's text parts with a blank line, as the contract's other ports do, leaving out blank ones", () => {
    const content = [
      { type: 'text', text: 'first failure' },
      { type: 'text', text: '  ' },
      { type: 'text', text: 'second failure' },
    ];
    expect(fromMcpResult({ content, isError: true }, 1000)).toEqual({ output: 'first failure\n\nsecond failure', isError: true });
    expect(fromMcpResult({ content }, 1000).output).toBe('first failure\n  \nsecond failure');
  });

  it('cuts long text and leaves out rich or structured content past the limit, saying so', () => {
    const long = fromMcpResult({ content: [{ type: 'text', text: 'x'.repeat(50) }] }, 10);
    expect(long.output).toBe(`${'x'.repeat(10)}… (cut at 10 characters)`);
    const big = fromMcpResult(
      { content: [{ type: 'image', data: 'A'.repeat(100), mimeType: 'image/png' }], structuredContent: { s: 'y'.repeat(100) } },
      50,
    );
    expect(big.metadata).toBeUndefined();
    expect(big.output).toContain('(rich content of over 50 characters left out)');
    expect(big.output).toContain('(structured content of over 50 characters left out)');
  });
});
