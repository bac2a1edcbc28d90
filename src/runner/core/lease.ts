import { RunConflictError } from '../../errors';
import type { ClockTimer } from '../../timing/clock';
import type { Checkpointed, Checkpoints } from './checkpoints';
import type { RunDriver, RunState } from './state';

/**
 * The lease of the process driving a checkpointed run, the one renewer of it: every third of
 * the runner's `runLeaseMs`, by the runner's clock, the run is written again with the lease
 * renewed, so other processes see its driver alive; a run whose lease lapsed is taken over
 * (`recover`, `recoverOrphans`). Every write while the run is driven goes through here, one
 * at a time (each a compare-and-set on the version): a durable step's and a renewal alike. A
 * write that finds the checkpoint changed by another process (a takeover) is a
 * {@link RunConflictError}: this process must stop driving.
 */
export class DriverLease {
  private chain: Promise<void> = Promise.resolve();
  private timer: ClockTimer | undefined;
  private stopped = false;

  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly run: Checkpointed,
    private readonly driverId: string,
    /** What a write stores, given the lease as renewed for it. */
    private readonly state: (driver: RunDriver) => RunState,
  ) {}

  /** Writes the run as `state` has it now, with the lease renewed; resolves once it is stored. */
  write(): Promise<void> {
    const next = this.chain.then(() => this.checkpoints.save(this.run, this.state(this.checkpoints.driver(this.driverId))));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Renews the lease until {@link stop}; `onLost` is told of a takeover, and the renewals end. */
  renew(onLost: (error: RunConflictError) => void): void {
    const { clock, runLeaseMs } = this.checkpoints;
    const beat = (): void => {
      if (this.stopped) return;
      this.timer = clock.setTimeout(
        () => {
          this.write().then(beat, (error: unknown) => {
            if (error instanceof RunConflictError) {
              this.stopped = true;
              onLost(error);
            } else beat(); // the store is unreachable: try again next beat; the lease may still hold
          });
        },
        Math.max(1, Math.floor(runLeaseMs / 3)),
      );
      this.timer.unref?.();
    };
    beat();
  }

  /** Stops renewing and waits for the write in flight, so the driver's own next save never races one. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.checkpoints.clock.clearTimeout(this.timer);
    await this.chain;
  }
}
