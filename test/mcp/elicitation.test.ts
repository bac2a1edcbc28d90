/** How a suspension becomes an MCP elicitation, and how the answer comes back (src/mcp/server/elicitation.ts, src/mcp/client/elicitation.ts). */
import { replyOf } from '../../src/mcp/client/elicitation';
import { answerOf, answerProblem, elicitationFor, formSchemaOf, type Elicitation } from '../../src/mcp/server/elicitation';

const BOTH = { form: true, url: true };

describe('elicitationFor', () => {
  it('asks an approval as a form without fields', () => {
    expect(elicitationFor({ id: 'p1', kind: 'approval', prompt: 'Refund 12 €?' }, BOTH)).toEqual({
      elicit: { mode: 'form', message: 'Refund 12 €?', requestedSchema: { type: 'object', properties: {} } },
    });
  });

  it('asks an input with its schema, or one answer field without one', () => {
    const schema = { type: 'object', title: 'ignored', properties: { n: { type: 'integer', minimum: 1, default: 2 } }, required: ['n'] };
    expect(elicitationFor({ id: 'p2', kind: 'input', prompt: 'How many?', data: { schema } }, BOTH)).toEqual({
      elicit: {
        mode: 'form',
        message: 'How many?',
        requestedSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1, default: 2 } }, required: ['n'] },
      },
    });
    expect(elicitationFor({ id: 'p3', kind: 'question', prompt: 'Why?' }, BOTH)).toMatchObject({
      elicit: { requestedSchema: { properties: { answer: { type: 'string' } }, required: ['answer'] } },
    });
  });

  it('asks an authorization in URL mode, with the suspension id as the elicitation id', () => {
    expect(elicitationFor({ id: 'p4', kind: 'authorization', prompt: 'Log in', url: 'https://x.test/a' }, BOTH)).toEqual({
      elicit: { mode: 'url', message: 'Log in', url: 'https://x.test/a', elicitationId: 'p4' },
    });
    expect(
      elicitationFor({ id: 'p4', kind: 'authorization', prompt: 'Log in', url: 'https://x.test/a' }, { form: true, url: false }),
    ).toEqual({
      outOfBand: 'the client does not support URL elicitation',
    });
  });

  it('says why a request cannot be asked, instead of sending it half-way', () => {
    expect(elicitationFor({ id: 'p5', kind: 'approval', prompt: '?' }, { form: false, url: true })).toEqual({
      outOfBand: 'the client does not support form elicitation',
    });
    const nested = { type: 'object', properties: { a: { type: 'object' } } };
    expect(elicitationFor({ id: 'p6', kind: 'input', prompt: '?', data: { schema: nested } }, BOTH)).toEqual({
      outOfBand:
        'its data.schema cannot be an MCP elicitation form: property a: type "object" is not a string, number, integer, boolean or enum list',
    });
  });
});

describe('formSchemaOf', () => {
  it.each([
    [{ type: 'array' }, 'its type is not "object"'],
    [{ type: 'object', oneOf: [] }, 'the keyword oneOf has no MCP form equivalent'],
    [
      { type: 'object', properties: { s: { type: 'string', pattern: '^a' } } },
      'property s: the keyword pattern has no MCP form equivalent',
    ],
    [
      { type: 'object', properties: { s: { type: 'string', format: 'ipv4' } } },
      'property s: format "ipv4" is not one of email, uri, date, date-time',
    ],
    [{ type: 'object', properties: { s: { type: 'string', enum: [1] } } }, 'property s: an enum must list strings'],
    [
      { type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } } },
      'property l: an array field must be a multi-select of string enum items',
    ],
    [{ type: 'object', properties: { s: { type: 'string' } }, required: ['t'] }, 'required must list property names'],
  ])('refuses %j', (schema, problem) => {
    expect(formSchemaOf(schema)).toEqual({ problem });
  });
});

describe('answers', () => {
  const request = { id: 'p7', kind: 'input', prompt: '?' };
  it('turns accept / decline / cancel into an ok answer with data, declined, cancelled', () => {
    expect(answerOf(request, { action: 'accept', content: { a: 1 } })).toEqual({ id: 'p7', ok: true, data: { a: 1 } });
    expect(answerOf(request, { action: 'accept', content: {} })).toEqual({ id: 'p7', ok: true });
    expect(answerOf(request, { action: 'decline' })).toEqual({ id: 'p7', ok: false, reason: 'declined' });
    expect(answerOf(request, { action: 'cancel' })).toEqual({ id: 'p7', ok: false, reason: 'cancelled' });
  });

  it('turns an answer of this library back into an elicitation result', () => {
    expect(replyOf({ id: 'p7', ok: true, data: { b: 'x' } })).toEqual({ action: 'accept', content: { b: 'x' } });
    expect(replyOf({ id: 'p7', ok: false, reason: 'declined' })).toEqual({ action: 'decline' });
    expect(replyOf({ id: 'p7', ok: false, reason: 'expired' })).toEqual({ action: 'cancel' });
  });
});

describe('answerProblem', () => {
  const form: Elicitation = {
    mode: 'form',
    message: '?',
    requestedSchema: {
      type: 'object',
      properties: {
        color: { type: 'string', enum: ['red', 'blue'] },
        n: { type: 'integer', minimum: 1, maximum: 5 },
        note: { type: 'string', maxLength: 3 },
        ok: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
      },
      required: ['color'],
    },
  };
  it.each([
    [{ color: 'red', extra: 1 }, 'extra is not a field of this form'],
    [{ n: 2 }, 'color is required'],
    [{ color: 'green' }, 'color must be one of red, blue'],
    [{ color: 'red', n: 1.5 }, 'n must be a whole number'],
    [{ color: 'red', n: 9 }, 'n must be at most 5'],
    [{ color: 'red', note: 'long' }, 'note must be at most 3 characters'],
    [{ color: 'red', ok: 'yes' }, 'ok must be true or false'],
    [{ color: 'red', tags: ['a', 'z'] }, 'tags has "z", which is not a choice'],
  ])('refuses %j: %s', (content, problem) => {
    expect(answerProblem(form, { action: 'accept', content })).toBe(problem);
  });

  it('accepts what fits, anything declined, and no content for a URL elicitation', () => {
    expect(answerProblem(form, { action: 'accept', content: { color: 'blue', n: 3, tags: ['b'] } })).toBeUndefined();
    expect(answerProblem(form, { action: 'decline', content: { evil: 1 } })).toBeUndefined();
    const url: Elicitation = { mode: 'url', message: 'log in', url: 'https://x.test', elicitationId: 'e' };
    expect(answerProblem(url, { action: 'accept' })).toBeUndefined();
    expect(answerProblem(url, { action: 'accept', content: { token: 'x' } })).toBe('token is not a field of this form');
  });
});
