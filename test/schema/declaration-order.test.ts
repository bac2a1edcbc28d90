import 'reflect-metadata';
import { Type } from 'class-transformer';
import { Allow, IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { Describe, schemaForClass } from 'toolnexus-ts';

/** E: models fill arguments in schema order, so properties keep their declaration order. */
describe('schema property order', () => {
  it('is declaration order whether or not a property has @Describe', () => {
    class Transfer {
      @IsString() from!: string;
      @IsString() @Describe('Account to credit') to!: string;
      @IsInt() amount!: number;
      @Describe('A free note') @IsOptional() @IsString() memo?: string;
      @IsString() currency!: string;
    }
    const schema = schemaForClass(Transfer);
    expect(Object.keys(schema.properties ?? {})).toEqual(['from', 'to', 'amount', 'memo', 'currency']);
    expect(schema.required).toEqual(['from', 'to', 'amount', 'currency']);
  });

  it('a property described before its validator keeps its place', () => {
    class Note {
      @IsString() a!: string;
      @Describe('any value') @Allow() b!: string;
      @IsString() c!: string;
    }
    expect(Object.keys(schemaForClass(Note).properties ?? {})).toEqual(['a', 'b', 'c']);
  });

  it('inherited properties come first, then the subclass own, each in order; nested DTOs too', () => {
    class Base {
      @IsString() @Describe('who') actor!: string;
      @IsString() reason!: string;
    }
    class Address {
      @IsString() street!: string;
      @IsString() @Describe('City') city!: string;
    }
    class Close extends Base {
      @IsInt() ticket!: number;
      @ValidateNested() @Type(() => Address) @Describe('Where') address!: Address;
      @IsString() @Describe('last') note!: string;
    }
    const schema = schemaForClass(Close);
    expect(Object.keys(schema.properties ?? {})).toEqual(['actor', 'reason', 'ticket', 'address', 'note']);
    expect(Object.keys(schema.properties?.address?.properties ?? {})).toEqual(['street', 'city']);
  });
});
