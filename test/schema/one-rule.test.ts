import 'reflect-metadata';
import { Type } from 'class-transformer';
import { Allow, IsArray, IsDate, IsInt, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { Describe, DtoRuleError, Tool, Toolkit, ToolRegistrationError, schemaForClass } from 'toolnexus-ts';

/**
 * Issue 27 item 4: a property the schema would show one way and validation treat another is
 * refused at registration, with a typed error whose message names the decorator to add.
 */
function refusal(register: () => unknown): DtoRuleError {
  try {
    register();
  } catch (error) {
    expect(error).toBeInstanceOf(DtoRuleError);
    expect(error).toBeInstanceOf(ToolRegistrationError);
    expect((error as DtoRuleError).code).toBe('TOOLNEXUS_DTO_RULE');
    return error as DtoRuleError;
  }
  throw new Error('registration was not refused');
}

describe('a property with no validator', () => {
  it('is refused at registration, naming the decorators that fix it', () => {
    class Refund {
      @IsInt() cents!: number;
      @Describe('Why the refund is made') reason!: string;
    }
    @Tool({ name: 'refund', description: 'Refund', args: Refund })
    class RefundTool {
      run() {
        return 'ok';
      }
    }
    const error = refusal(() => new Toolkit().register(RefundTool));
    expect(error.property).toBe('Refund.reason');
    expect(error.message).toBe(
      'tool "refund": Refund.reason has no class-validator decorator, so validation strips it before run sees it while the schema shows it ' +
        'to the model as required: add @IsString() (with @IsOptional() if it may be left out), or @Allow() to accept any value',
    );
  });

  it('names the validator for its TypeScript type, nested classes included', () => {
    class Inner {
      @IsString() name!: string;
    }
    class Counted {
      @Describe('how many') count!: number;
    }
    class Holder {
      @Describe('the inner') inner!: Inner;
    }
    expect(refusal(() => schemaForClass(Counted)).message).toContain('add @IsNumber() or @IsInt()');
    expect(refusal(() => schemaForClass(Holder)).message).toContain('add @ValidateNested() with @Type(() => Inner)');
  });

  it('is refused inside a nested DTO too', () => {
    class Inner {
      @Describe('no validator') note!: string;
    }
    class Outer {
      @ValidateNested() @Type(() => Inner) inner!: Inner;
    }
    expect(refusal(() => schemaForClass(Outer)).property).toBe('Inner.note');
  });

  it('with only @IsOptional() is refused: it checks nothing, the schema would guess', () => {
    class Loose {
      @IsOptional() note?: string;
    }
    expect(refusal(() => schemaForClass(Loose)).message).toMatch(/^Loose\.note has only @IsOptional\(\).*add @IsString\(\), or @Allow\(\)/);
  });

  it('with @Allow() is shown as any value, not as its TypeScript type', async () => {
    class Free {
      @Allow() @Describe('anything') note!: string;
    }
    @Tool({ name: 'free', description: 'Free', args: Free })
    class FreeTool {
      run(args: Free) {
        return JSON.stringify(args.note);
      }
    }
    const toolkit = new Toolkit().register(FreeTool);
    expect(toolkit.get('free')?.inputSchema.properties).toEqual({ note: { description: 'anything' } });
    expect((await toolkit.execute('free', { note: 5 })).output).toBe('5');
  });
});

describe('each: true', () => {
  it('without @IsArray() is refused: class-validator would also accept a single value', () => {
    class Tags {
      @IsString({ each: true }) tags!: string[];
    }
    const error = refusal(() => schemaForClass(Tags));
    expect(error.message).toBe(
      'Tags.tags has @IsString({ each: true }) but no @IsArray(): class-validator then also accepts a single value, ' +
        'while the schema says an array: add @IsArray() to Tags.tags',
    );
  });

  it('with @IsArray() gives a schema and a validation that agree', async () => {
    class Tags {
      @IsArray() @IsString({ each: true }) tags!: string[];
    }
    @Tool({ name: 'tag', description: 'Tag', args: Tags })
    class TagTool {
      run(args: Tags) {
        return args.tags.join(',');
      }
    }
    const toolkit = new Toolkit().register(TagTool);
    expect(toolkit.get('tag')?.inputSchema.properties?.tags).toEqual({ type: 'array', items: { type: 'string' } });
    expect((await toolkit.execute('tag', { tags: 'a' })).isError).toBe(true);
    expect(await toolkit.execute('tag', { tags: ['a', 'b'] })).toEqual({ output: 'a,b', isError: false });
  });
});

describe('decorators whose validation JSON Schema cannot carry', () => {
  it('@IsDate() without @Type(() => Date) is refused: JSON has no dates', () => {
    class When {
      @IsDate() at!: Date;
    }
    expect(refusal(() => schemaForClass(When)).message).toContain('add @Type(() => Date) from class-transformer to When.at');
    class Typed {
      @IsDate() @Type(() => Date) at!: Date;
    }
    expect(schemaForClass(Typed).properties?.at).toEqual({ type: 'string', format: 'date-time' });
  });

  it('@Matches with flags is refused; without, or with "u", it is a pattern', () => {
    class Code {
      @Matches(/^[a-z]+$/i) code!: string;
    }
    expect(refusal(() => schemaForClass(Code)).message).toContain('@Matches with the flags "i"');
    class Plain {
      @Matches(/^[a-z]+$/u) code!: string;
    }
    expect(schemaForClass(Plain).properties?.code).toEqual({ type: 'string', pattern: '^[a-z]+$' });
  });
});
