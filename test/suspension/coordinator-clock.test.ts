/**
 * The coordinator's own clock (ResumeCoordinatorOptions.clock): an inline answer's expiry and
 * the recorded call's timestamp are read from it, so a test steps past an expiry without waiting.
 */
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FakeClock } from '../fixtures/fake-clock';

function shipTool(clock: FakeClock) {
  return new Toolkit().register(
    defineTool({
      name: 'ship',
      description: 'Ships once approved within a minute',
      run: (_args, ctx) =>
        ctx?.replay?.request.kind === 'approval' && ctx.answer?.ok
          ? success('shipped')
          : pending({ kind: 'approval', prompt: 'Ship?', expiresAt: new Date(clock.now() + 60_000).toISOString() }),
    }),
  );
}

describe('ResumeCoordinator on a fake clock', () => {
  it('judges an inline answer against the request expiry by its clock', async () => {
    const clock = new FakeClock();
    const late = new ResumeCoordinator({
      toolkit: shipTool(clock),
      clock,
      waitFor: (request) => {
        clock.advance(60_000); // the person answers exactly when the request expires
        return { id: request.id, ok: true };
      },
    });
    expect(await late.execute('ship', {})).toMatchObject({ output: 'declined/expired: Ship? (expired)', isError: true });

    const inTime = new ResumeCoordinator({
      toolkit: shipTool(clock),
      clock,
      waitFor: (request) => {
        clock.advance(59_999);
        return { id: request.id, ok: true };
      },
    });
    expect(await inTime.execute('ship', {})).toMatchObject({ output: 'shipped', isError: false });
  });

  it('stamps the calls it records with its clock', async () => {
    const clock = new FakeClock(Date.UTC(2031, 5, 1));
    const coordinator = new ResumeCoordinator({ toolkit: shipTool(clock), clock });
    const { id } = pendingOf(await coordinator.execute('ship', {}))!;
    expect((await coordinator.store.get(id))?.createdAt).toBe('2031-06-01T00:00:00.000Z');
  });

  it('refuses a clock that is not one', () => {
    expect(() => new ResumeCoordinator({ toolkit: new Toolkit(), clock: { now: () => 0 } as never })).toThrow(
      'clock must have now, setTimeout and clearTimeout',
    );
  });
});
