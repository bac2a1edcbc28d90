import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Tool, Toolkit } from 'toolnexus-ts';

/** Issue 20: a tool whose DTO has no properties is called with `{}`, no arguments or `""`. */
class NoArgs {}

@Tool({ name: 'get_time', description: 'The current time', args: NoArgs })
class GetTime {
  run(args: NoArgs) {
    return `time ${JSON.stringify(args)} ${args instanceof NoArgs}`;
  }
}

class Base {}
class Child extends Base {
  @IsString() name!: string;
}

@Tool({ name: 'named', description: 'A DTO whose parent has no properties', args: Child })
class Named {
  run(args: Child) {
    return args.name;
  }
}

const toolkit = new Toolkit().register(GetTime, Named);

describe('a tool with an empty DTO', () => {
  it('has the schema of an object with no properties', () => {
    expect(toolkit.get('get_time')?.inputSchema).toMatchObject({ type: 'object', properties: {} });
    expect(toolkit.toOpenAI()[0]?.function.parameters).toMatchObject({ type: 'object', properties: {} });
  });

  it.each([
    ['{}', {}],
    ['undefined', undefined],
    ['""', ''],
    ['"{}"', '{}'],
  ])('runs with %s and gets a bare instance of its DTO', async (_label, args) => {
    const result = await toolkit.execute('get_time', args);
    expect(result).toEqual({ output: 'time {} true', isError: false });
  });

  it('drops keys the DTO does not declare, as whitelisting does for any DTO', async () => {
    expect(await toolkit.execute('get_time', { tz: 'UTC', __proto__: { admin: true } })).toEqual({
      output: 'time {} true',
      isError: false,
    });
  });

  it('still refuses what is not an object', async () => {
    expect((await toolkit.execute('get_time', '[1]')).output).toBe(
      'invalid arguments for get_time: arguments must be a JSON object, got an array',
    );
    expect((await toolkit.execute('get_time', 'nope')).isError).toBe(true);
  });

  it('a DTO inheriting from an empty class validates its own properties', async () => {
    expect(await toolkit.execute('named', { name: 'x' })).toEqual({ output: 'x', isError: false });
    expect((await toolkit.execute('named', {})).output).toBe('invalid arguments for named: name: name must be a string');
  });
});
