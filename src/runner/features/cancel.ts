import { cancelStopOf } from '../core/cancel-stop';
import type { RunFeature } from '../core/feature';

/**
 * Cancel as a feature: a run whose latch a `cancel` aborted stops before its next model call,
 * and once its turn's calls are in (the calls then waiting for answers are cancelled with it).
 * Aborting the calls in flight is the run's signal's, when it has one (`armed`).
 */
export const CANCEL: RunFeature = {
  name: 'cancel',
  beforeModel: (live) => cancelStopOf(live.latch),
  afterTools: (live) => cancelStopOf(live.latch),
};
