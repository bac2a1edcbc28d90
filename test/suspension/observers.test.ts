/**
 * Suspension observers (docs/operating.md, "Observers"): told after each store write, with
 * the call redacted; a throwing observer changes nothing about the call it watches.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { REDACTED, Sensitive, Tool, Toolkit, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, type SuspendedCall } from 'toolnexus-ts/suspension';

class LoginArgs {
  @IsString() user!: string;
  @IsString() @Sensitive() password!: string;
}

/** Asks for a login, then an approval: a chain of two links. */
@Tool({ name: 'login', description: 'Logs in after two questions', args: LoginArgs })
class LoginTool {
  run(args: LoginArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'authorization', prompt: 'Log in', data: { url: 'https://idp.example.com' } });
    if (ctx.replay?.chain.length === 0) return pending({ kind: 'approval', prompt: `Let ${args.user} in?` });
    return success(`welcome ${args.user}`);
  }
}

describe('ResumeCoordinator observers', () => {
  it('tells of each recorded, settled and chained call after the store write, redacted, and drops what observers throw', async () => {
    const events: Array<[string, SuspendedCall, SuspendedCall | undefined]> = [];
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(LoginTool) });
    coordinator.observe({
      onPending: () => {
        throw new Error('a broken observer');
      },
      onSettled: () => {
        throw new Error('a broken observer');
      },
    });
    const stop = coordinator.observe({
      onPending: (call) => void coordinator.get(call.request.id).then((stored) => events.push(['pending', call, stored])),
      onSettled: (call) => void coordinator.get(call.request.id).then((stored) => events.push(['settled', call, stored])),
    });
    const first = pendingOf(await coordinator.execute('login', { user: 'ada', password: 'pw-1' }))!.id;
    const second = pendingOf(await coordinator.resolve({ id: first, ok: true }, undefined, { by: { id: 'user:ada' } }))!.id;
    expect(await coordinator.resolve({ id: second, ok: true })).toEqual(success('welcome ada'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map(([event, call]) => [event, call.request.id, call.status])).toEqual([
      ['pending', first, 'pending'],
      ['settled', first, 'resolved'],
      ['pending', second, 'pending'],
      ['settled', second, 'resolved'],
    ]);
    for (const [, call, stored] of events) {
      expect(call.args).toEqual({ user: 'ada', password: REDACTED });
      expect(call.binding).toBeUndefined();
      expect(stored?.status).toBe(call.status); // the store already held what the observer was told
    }
    expect(events[1]![1]).toMatchObject({ next: second, answeredBy: { id: 'user:ada' }, outcome: { isError: true } });
    stop();
    await coordinator.execute('login', { user: 'bob', password: 'pw-2' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toHaveLength(4);
  });
});
