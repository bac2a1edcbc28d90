import { declaredFields, inputFields, inputProblems } from '../../src/inbox/input-schema';

/** The form an input request asks for, and the server's check of an answer against it (docs/operating.md, "Inbox"). */
describe('input forms from data.schema', () => {
  const data = {
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', minLength: 2 },
        size: { enum: ['S', 'M'] },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['name'],
    },
  };

  it('renders the flat fields, and passes a declared field it cannot render to the tool unchecked', () => {
    const fields = inputFields(data) ?? [];
    expect(fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['name', 'string', true],
      ['size', 'string', false],
    ]);
    expect(inputProblems(fields, { name: 'Al', tags: ['x'] }, declaredFields(data))).toEqual([]);
    expect(inputProblems(fields, { name: 'A', size: 'XL', other: 1 }, declaredFields(data))).toEqual([
      { field: 'other', message: 'is not a field of this form' },
      { field: 'name', message: 'must be at least 2 characters' },
      { field: 'size', message: 'must be one of S, M' },
    ]);
  });

  it('marks a writeOnly field, which the page renders as a password input (its value is consumed, docs/suspension.md)', () => {
    const fields = inputFields({
      schema: { type: 'object', properties: { code: { type: 'string', writeOnly: true }, note: { type: 'string' } } },
    });
    expect(fields?.map((f) => [f.name, f.writeOnly])).toEqual([
      ['code', true],
      ['note', undefined],
    ]);
  });

  it('has no form without a schema of properties', () => {
    expect(inputFields(undefined)).toBeUndefined();
    expect(inputFields({ schema: 'free text' })).toBeUndefined();
    expect(declaredFields({})).toEqual([]);
  });
});
