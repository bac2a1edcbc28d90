import { AbortLatch, spreadContext, watchOf, withLatch } from '../../src/timing/abort-latch';

/*
 * spreadContext: a replay's context copied with one field more (the Toolkit adds `approval`)
 * keeps its lazy signal lazy, and still follows the latch.
 */
describe('spreadContext', () => {
  it('copies a latched context without making its AbortSignal, and the copy still aborts with the latch', () => {
    const latch = new AbortLatch();
    const plain: { runId: string; callId: string; signal?: AbortSignal; approval?: string } = { runId: 'run-1', callId: 'call-1' };
    const ctx = withLatch(plain, latch);
    const made = jest.spyOn(latch, 'signal', 'get');
    const copy = spreadContext(ctx, { approval: 'yes' });
    expect(made).not.toHaveBeenCalled();
    expect(watchOf(copy)).toBe(latch);
    expect({ runId: copy.runId, callId: copy.callId, approval: copy.approval }).toEqual({
      runId: 'run-1',
      callId: 'call-1',
      approval: 'yes',
    });
    expect(ctx.approval).toBeUndefined();
    latch.abort(new Error('lease lost'));
    expect(copy.signal?.aborted).toBe(true);
    expect(made).toHaveBeenCalled();
  });

  it('is a plain spread for a context without a latch, or when the extra fields give a signal', () => {
    type Ctx = { runId: string; signal?: AbortSignal; approval?: string };
    const signal = new AbortController().signal;
    const unlatched: Ctx = { runId: 'r', signal };
    expect(spreadContext(unlatched, { approval: 'yes' })).toEqual({
      runId: 'r',
      signal,
      approval: 'yes',
    });
    const bare: Ctx = { runId: 'r' };
    const latched = withLatch(bare, new AbortLatch());
    const own = new AbortController().signal;
    const copy = spreadContext(latched, { signal: own });
    expect(copy.signal).toBe(own);
    expect(watchOf(copy)).toBe(own);
  });
});
