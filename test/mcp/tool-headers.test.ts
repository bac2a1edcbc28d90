/** SEP-2243: which tools McpToolSource leaves out of a 2026-07-28 HTTP listing for malformed x-mcp-header annotations. */
import { mcpHeaders } from '../../src/schema/mcp-headers';

const headerFault = (schema: unknown) => mcpHeaders(schema).fault;

const tool = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('x-mcp-header annotations', () => {
  it('takes well-formed ones and schemas without any', () => {
    expect(
      headerFault(tool({ region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' } })),
    ).toBeUndefined();
    expect(
      headerFault(tool({ nested: { type: 'object', properties: { flag: { type: 'boolean', 'x-mcp-header': 'Flag' } } } })),
    ).toBeUndefined();
    expect(headerFault(tool({ plain: { type: 'number' } }))).toBeUndefined();
    expect(headerFault(undefined)).toBeUndefined();
  });

  it.each([
    ['an empty name', tool({ v: { type: 'string', 'x-mcp-header': '' } }), /non-empty token/],
    ['a name with a space', tool({ v: { type: 'string', 'x-mcp-header': 'My Header' } }), /non-empty token/],
    ['a name with a colon', tool({ v: { type: 'string', 'x-mcp-header': 'a:b' } }), /non-empty token/],
    ['a non-ASCII name', tool({ v: { type: 'string', 'x-mcp-header': 'Réglage' } }), /non-empty token/],
    ['an object property', tool({ v: { type: 'object', 'x-mcp-header': 'Obj' } }), /string, integer or boolean/],
    ['a number property', tool({ v: { type: 'number', 'x-mcp-header': 'Score' } }), /string, integer or boolean/],
    [
      'a name twice, in other case',
      tool({ a: { type: 'string', 'x-mcp-header': 'Id' }, b: { type: 'string', 'x-mcp-header': 'ID' } }),
      /declared twice/,
    ],
    ['one under items', tool({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } }), /reached through properties/],
    [
      'one under anyOf',
      tool({}, { anyOf: [{ properties: { v: { type: 'string', 'x-mcp-header': 'V' } } }] }),
      /reached through properties/,
    ],
  ])('refuses %s', (_what, schema, fault) => {
    expect(headerFault(schema)).toMatch(fault);
  });
});
