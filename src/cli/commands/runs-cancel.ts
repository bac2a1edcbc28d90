import { AnswerRefusedError, RunNotFoundError } from '../../errors';
import { cancelRun } from '../../runner/core/cancel';
import { isEnded, type RunPhase } from '../../runner/core/state';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';

/**
 * `runs cancel RUN_ID`: cancels a halted run (or one another process drives): its open
 * questions settle `cancelled` as the CLI's principal (the answer policy judges it), and its
 * checkpoint says `cancelled`, so nothing continues it (docs/agents.md, "Cancel"). A cancel the
 * policy refuses is exit 6 and changes nothing.
 */
export const runsCancel = storeCommand({
  path: ['runs', 'cancel'],
  summary: 'cancel a run: its open questions settle cancelled and nothing continues it',
  usage: 'RUN_ID [--reason R]',
  options: { reason: { type: 'string' } },
  positionals: 1,
  async run({ positionals, values, io, open }) {
    const runId = positionals[0] as string;
    const target = await open();
    const reason = typeof values.reason === 'string' ? values.reason : undefined;
    try {
      const before = await target.store.loadRun(runId);
      const phase = (before?.state as { phase?: unknown } | undefined)?.phase;
      if (typeof phase === 'string' && isEnded(phase as RunPhase)) {
        const message = `run ${runId} had already ended: ${phase}`;
        io.out(values.json ? JSON.stringify({ ok: false, runId, status: phase, message }) : message);
        return EXIT.alreadySettled;
      }
      const result = await cancelRun(target.coordinator, target.store, runId, {
        ...(reason === undefined ? {} : { reason }),
        audit: { by: target.principal },
      });
      const message = result.status === 'cancelled' ? `run ${runId} is cancelled` : `run ${runId} had already ended: ${result.status}`;
      io.out(values.json ? JSON.stringify({ ok: result.status === 'cancelled', runId, status: result.status }) : message);
      return result.status === 'cancelled' ? EXIT.ok : EXIT.alreadySettled;
    } catch (error) {
      if (error instanceof AnswerRefusedError) {
        // Judged before anything changed: the run is as it was.
        const message = `not allowed: ${error.reason}`;
        (values.json ? io.out : io.err)(values.json ? JSON.stringify({ ok: false, runId, message }) : message);
        return EXIT.notAllowed;
      }
      if (!(error instanceof RunNotFoundError)) throw error;
      (values.json ? io.out : io.err)(values.json ? JSON.stringify({ ok: false, runId, message: error.message }) : error.message);
      return EXIT.notFound;
    }
  },
});
