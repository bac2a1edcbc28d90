import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDateString,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Describe, Tool, Toolkit, schemaForClass } from 'toolnexus-ts';

enum Priority {
  Low = 'low',
  High = 'high',
}
enum Level {
  One = 1,
  Two = 2,
}

class Address {
  @IsString() @Describe('Street and number') street!: string;
  @IsOptional() @IsString() city?: string;
}

class LineItem {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

class OrderArgs {
  @IsString() @Length(2, 40) @Describe('Customer name') name!: string;
  @IsInt() @Min(1) @Max(100) quantity!: number;
  @IsNumber() price!: number;
  @IsBoolean() gift!: boolean;
  @IsEnum(Priority) priority!: Priority;
  @IsEnum(Level) level!: Level;
  @IsIn(['red', 'green']) colour!: string;
  @IsArray() @IsString({ each: true }) @ArrayMinSize(1) @ArrayMaxSize(5) tags!: string[];
  @IsArray() @IsInt({ each: true }) scores!: number[];
  @ValidateNested() @Type(() => Address) address!: Address;
  @IsArray() @ValidateNested({ each: true }) @Type(() => LineItem) items!: LineItem[];
  @IsOptional() @IsEmail() email?: string;
  @IsOptional() @IsUrl() site?: string;
  @IsOptional() @IsUUID() ref?: string;
  @IsOptional() @IsDateString() due?: string;
  @IsOptional() @Matches(/^[A-Z]{3}$/) currency?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) note?: string;
}

describe('JSON Schema from DTO metadata (§2)', () => {
  const schema = schemaForClass(OrderArgs);

  it('is a closed object with required and optional properties', () => {
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual([
      'name',
      'quantity',
      'price',
      'gift',
      'priority',
      'level',
      'colour',
      'tags',
      'scores',
      'address',
      'items',
    ]);
  });

  it('maps primitive types, bounds and descriptions', () => {
    const p = schema.properties!;
    expect(p.name).toEqual({ description: 'Customer name', type: 'string', minLength: 2, maxLength: 40 });
    expect(p.quantity).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(p.price).toEqual({ type: 'number' });
    expect(p.gift).toEqual({ type: 'boolean' });
    expect(p.note).toEqual({ type: 'string', minLength: 1, maxLength: 200 });
  });

  it('maps enums and IsIn', () => {
    const p = schema.properties!;
    expect(p.priority).toEqual({ type: 'string', enum: ['low', 'high'] });
    expect(p.level).toEqual({ type: 'number', enum: [1, 2] });
    expect(p.colour).toEqual({ type: 'string', enum: ['red', 'green'] });
  });

  it('maps arrays of primitives with item types and sizes', () => {
    const p = schema.properties!;
    expect(p.tags).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 });
    expect(p.scores).toEqual({ type: 'array', items: { type: 'integer' } });
  });

  it('inlines nested DTOs and arrays of DTOs, without $ref', () => {
    const p = schema.properties!;
    expect(p.address).toEqual({
      type: 'object',
      properties: { street: { description: 'Street and number', type: 'string' }, city: { type: 'string' } },
      required: ['street'],
      additionalProperties: false,
    });
    expect(p.items).toEqual({
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
        required: ['sku', 'qty'],
        additionalProperties: false,
      },
    });
    expect(JSON.stringify(schema)).not.toContain('$ref');
  });

  it('maps formats and patterns', () => {
    const p = schema.properties!;
    expect(p.email).toEqual({ type: 'string', format: 'email' });
    expect(p.site).toEqual({ type: 'string', format: 'uri' });
    expect(p.ref).toEqual({ type: 'string', format: 'uuid' });
    expect(p.due).toEqual({ type: 'string', format: 'date-time' });
    expect(p.currency).toEqual({ type: 'string', pattern: '^[A-Z]{3}$' });
  });

  it('includes inherited properties and constraints of a parent DTO', () => {
    class Paged {
      @IsOptional() @IsInt() @Min(1) @Describe('Page number') page?: number;
    }
    class SearchArgs extends Paged {
      @IsString() query!: string;
    }
    const s = schemaForClass(SearchArgs);
    expect(s.properties).toEqual({ page: { description: 'Page number', type: 'integer', minimum: 1 }, query: { type: 'string' } });
    expect(s.required).toEqual(['query']);
  });

  it('stops at a DTO that contains itself', () => {
    class TreeNode {
      @IsString() label!: string;
      @IsOptional() @ValidateNested() @Type(() => TreeNode) child?: TreeNode;
    }
    const s = schemaForClass(TreeNode);
    expect(s.properties!.child).toEqual({ type: 'object' });
  });

  it('is computed once per class, not per call', async () => {
    @Tool({ description: 'orders', args: OrderArgs })
    class OrderTool {
      run() {
        return 'ok';
      }
    }
    @Tool({ name: 'order2', description: 'orders again', args: OrderArgs })
    class OrderTool2 {
      run() {
        return 'ok';
      }
    }
    const toolkit = new Toolkit().register(OrderTool, OrderTool2);
    expect(toolkit.get('order')!.inputSchema).toBe(toolkit.get('order2')!.inputSchema);
    expect(toolkit.toOpenAI()[0]!.function.parameters).toBe(toolkit.toOpenAI()[0]!.function.parameters);
  });
});
