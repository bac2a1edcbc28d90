import { authRequired, failure, pending, pendingOf, sanitizeName, success } from 'toolnexus-ts';

describe('wire helpers (§1)', () => {
  it('success keeps a string as is and stringifies anything else', () => {
    expect(success('hi')).toEqual({ output: 'hi', isError: false });
    expect(success({ a: 1 })).toEqual({ output: '{"a":1}', isError: false });
    expect(success(42)).toEqual({ output: '42', isError: false });
    expect(success([1, 'x'])).toEqual({ output: '[1,"x"]', isError: false });
    expect(success('x', { source: 'cache' })).toEqual({ output: 'x', isError: false, metadata: { source: 'cache' } });
  });

  it('success never throws for values JSON cannot hold', () => {
    expect(success(10n)).toEqual({
      output: "the tool's output cannot be sent to the model: it is not JSON-serialisable (Do not know how to serialize a BigInt)",
      isError: true,
    });
    expect(success(undefined).output).toBe('undefined');
  });

  it('failure carries the message', () => {
    expect(failure('boom')).toEqual({ output: 'boom', isError: true });
    expect(failure('boom', { code: 7 })).toEqual({ output: 'boom', isError: true, metadata: { code: 7 } });
  });

  it('pending generates a pnd- id and puts prompt and url in the output', () => {
    const r = pending({ kind: 'approval', prompt: 'Approve?' });
    expect(r.isError).toBe(true);
    expect(r.output).toBe('Approve?');
    const req = pendingOf(r)!;
    expect(req.id).toMatch(/^pnd-[0-9a-f-]{36}$/);
    expect(req).toEqual({ id: req.id, kind: 'approval', prompt: 'Approve?' });

    const withUrl = pending({ kind: 'authorization', prompt: 'Log in', url: 'https://idp.example/login' });
    expect(withUrl.output).toBe('Log in\nhttps://idp.example/login');
  });

  it('pending keeps a given id and every optional field', () => {
    const r = pending({
      id: 'mine',
      kind: 'input',
      prompt: 'Your city?',
      data: { schema: { type: 'string' } },
      expiresAt: '2030-01-01T00:00:00Z',
    });
    expect(r.metadata).toEqual({
      pending: { id: 'mine', kind: 'input', prompt: 'Your city?', data: { schema: { type: 'string' } }, expiresAt: '2030-01-01T00:00:00Z' },
    });
  });

  it('pending ids are unique', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => pendingOf(pending({ kind: 'q', prompt: 'p' }))!.id));
    expect(ids.size).toBe(1000);
  });

  it('authRequired is an authorization pending with a default prompt', () => {
    const r = authRequired('https://login.example');
    expect(r.output).toBe('Authorization required to continue\nhttps://login.example');
    expect(pendingOf(r)).toMatchObject({
      kind: 'authorization',
      url: 'https://login.example',
      prompt: 'Authorization required to continue',
    });
    expect(pendingOf(authRequired('u', 'Sign in to Jira'))!.prompt).toBe('Sign in to Jira');
  });

  it('pendingOf is undefined for everything but a suspension', () => {
    expect(pendingOf(success('x'))).toBeUndefined();
    expect(pendingOf(failure('x'))).toBeUndefined();
    expect(pendingOf({ output: '', isError: true, metadata: { pending: 'nope' } })).toBeUndefined();
    expect(pendingOf(undefined)).toBeUndefined();
  });

  it('sanitizeName replaces everything outside [a-zA-Z0-9_-]', () => {
    expect(sanitizeName('get weather.v2/é')).toBe('get_weather_v2__');
    expect(sanitizeName('ok_name-1')).toBe('ok_name-1');
  });
});
