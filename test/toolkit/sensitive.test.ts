/**
 * `@Sensitive()` and `toolkit.redact` / `redactCall` (docs/operating.md, "Sensitive fields"):
 * marked values never reach what is shown, at any depth, and redaction fails closed.
 */
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { REDACTED, Sensitive, Tool, Toolkit, defineTool, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, redactCall } from 'toolnexus-ts/suspension';

class Card {
  @IsString() holder!: string;
  @IsString() @Sensitive() number!: string;
  @IsString() @Sensitive() cvc!: string;
}

class Credentials {
  @IsString() user!: string;
  @IsString() password!: string;
}

class BaseArgs {
  @IsString() @Sensitive() apiKey!: string;
}

class PayArgs extends BaseArgs {
  @IsInt() cents!: number;
  @ValidateNested() @Type(() => Card) card!: Card;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => Card) spares?: Card[];
  @IsOptional() @Sensitive() @ValidateNested() @Type(() => Credentials) login?: Credentials;
}

class Node {
  @IsString() @Sensitive() secret!: string;
  @IsOptional() @ValidateNested() @Type(() => Node) child?: Node;
}

class TreeArgs {
  @ValidateNested() @Type(() => Node) root!: Node;
}

class PlainArgs {
  @IsString() note!: string;
}

@Tool({ name: 'pay', description: 'Pays with a card', args: PayArgs })
class PayTool {
  run(args: PayArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Pay ${args.cents}?` });
    return success(`paid with ${args.card.number.slice(-4)}`);
  }
}

@Tool({ name: 'tree', description: 'Walks a tree', args: TreeArgs })
class TreeTool {
  run() {
    return 'ok';
  }
}

@Tool({ name: 'plain', description: 'Nothing secret', args: PlainArgs })
class PlainTool {
  run() {
    return 'ok';
  }
}

const raw = defineTool({
  name: 'raw',
  description: 'A schema tool',
  inputSchema: { type: 'object', properties: { token: { type: 'string' } } },
  run: () => 'ok',
});

const toolkit = new Toolkit().register(PayTool, TreeTool, PlainTool, raw);
const card = (n: string) => ({ holder: 'Ada', number: n, cvc: '123' });

describe('@Sensitive and toolkit.redact', () => {
  it('redacts marked fields, inherited ones, nested DTOs, arrays of them, and a marked nested DTO whole', () => {
    const args = {
      apiKey: 'sk-live-1',
      cents: 500,
      card: card('4111111111111111'),
      spares: [card('5500000000000004'), card('340000000000009')],
      login: { user: 'ada', password: 'hunter2' },
    };
    const shown = toolkit.redact('pay', args);
    expect(shown).toEqual({
      apiKey: REDACTED,
      cents: 500,
      card: { holder: 'Ada', number: REDACTED, cvc: REDACTED },
      spares: [
        { holder: 'Ada', number: REDACTED, cvc: REDACTED },
        { holder: 'Ada', number: REDACTED, cvc: REDACTED },
      ],
      login: REDACTED,
    });
    const text = JSON.stringify(shown);
    for (const secret of ['sk-live-1', '4111', '5500', '3400', '123', 'hunter2']) expect(text).not.toContain(secret);
    // A copy: what the store keeps and the replay uses is untouched.
    expect(args.card.number).toBe('4111111111111111');
    expect(args.apiKey).toBe('sk-live-1');
  });

  it('follows a DTO that contains itself as deep as the value goes', () => {
    const shown = toolkit.redact('tree', { root: { secret: 'a', child: { secret: 'b', child: { secret: 'c' } } } });
    expect(shown).toEqual({ root: { secret: REDACTED, child: { secret: REDACTED, child: { secret: REDACTED } } } });
  });

  it('fails closed: an unregistered tool, a value JSON cannot copy, a scalar where a DTO with secrets belongs', () => {
    expect(toolkit.redact('nope', { password: 'x' })).toBe(REDACTED);
    expect(toolkit.redact('pay', { apiKey: 'k', cents: 10n })).toBe(REDACTED);
    expect(toolkit.redact('pay', { apiKey: 'k', card: '4111111111111111' })).toEqual({ apiKey: REDACTED, card: REDACTED });
    expect(toolkit.redact('pay', '{"apiKey":"k"}')).toBe(REDACTED);
  });

  it('shows arguments with nothing marked as they are, as a copy', () => {
    const args = { note: 'hello' };
    const shown = toolkit.redact('plain', args);
    expect(shown).toEqual({ note: 'hello' });
    expect(shown).not.toBe(args);
    expect(toolkit.redact('raw', { token: 't' })).toEqual({ token: 't' });
    expect(toolkit.redact('plain', undefined)).toBeUndefined();
  });

  it('keeps redacting the same way call after call (the plan is built once per class)', () => {
    const first = toolkit.redact('pay', { apiKey: 'a', cents: 1, card: card('1') });
    const second = toolkit.redact('pay', { apiKey: 'b', cents: 2, card: card('2') });
    expect(first).toEqual({ apiKey: REDACTED, cents: 1, card: { holder: 'Ada', number: REDACTED, cvc: REDACTED } });
    expect(second).toEqual({ apiKey: REDACTED, cents: 2, card: { holder: 'Ada', number: REDACTED, cvc: REDACTED } });
  });
});

describe('redactCall', () => {
  it('redacts a stored call’s arguments, leaves out its binding, and the replay still gets the real values', async () => {
    const coordinator = new ResumeCoordinator({ toolkit, bindingKey: 'k' });
    const result = await coordinator.execute('pay', { apiKey: 'sk-live-2', cents: 700, card: card('4242424242424242') });
    const id = pendingOf(result)!.id;
    const call = (await coordinator.get(id))!;
    const shown = redactCall(toolkit, call);
    expect(shown.args).toEqual({ apiKey: REDACTED, cents: 700, card: { holder: 'Ada', number: REDACTED, cvc: REDACTED } });
    expect(shown.binding).toBeUndefined();
    expect(shown.request).toEqual(call.request);
    expect(JSON.stringify(shown)).not.toMatch(/sk-live-2|4242/);
    expect(call.binding).toBeDefined(); // the stored call itself is untouched
    expect(await coordinator.resolve({ id, ok: true })).toEqual(success('paid with 4242'));
    expect(redactCall(new Toolkit(), call).args).toBe(REDACTED);
  });
});
