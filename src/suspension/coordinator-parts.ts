import { ContentBound } from './content';
import { Telemetry } from '../telemetry/telemetry';
import type { Clock } from '../timing/clock';
import type { Toolkit } from '../toolkit/toolkit';
import type { FormatRefusal, WaitFor } from './answers';
import { Authority } from './authority';
import { checkAutomaticAnswers } from './automatic';
import { Binding } from './binding';
import { coordinatorSettings, type ResumeCoordinatorOptions } from './coordinator-options';
import { MemorySuspensionStore } from './memory';
import { Observers } from './observer';
import { Recorder } from './recorder';
import { Resolution } from './resolution';
import { StandingAnswers } from './standing';
import type { SuspensionStore } from './store';
import { Sweeper } from './sweep';

/**
 * What a `ResumeCoordinator` delegates to, wired once from its options: the authority that
 * judges every answer, the resolution that claims and replays, the standing answers (grants,
 * automatic answers), the sweep, and the observers each of them tells.
 */
export interface CoordinatorParts {
  store: SuspensionStore;
  toolkit: Toolkit;
  content: ContentBound;
  waitFor: WaitFor | undefined;
  maxChain: number;
  formatRefusal: FormatRefusal;
  binding: Binding;
  resolution: Resolution;
  recorder: Recorder;
  clock: Clock;
  maxAnswerBytes: number;
  observers: Observers;
  telemetry: Telemetry;
  authority: Authority;
  standing: StandingAnswers;
  sweeper: Sweeper;
}

/** Builds a coordinator's parts from its options (checked by `coordinatorSettings`). */
export function coordinatorParts(options: ResumeCoordinatorOptions): CoordinatorParts {
  const settings = coordinatorSettings(options);
  const maxAnswerBytes = settings.maxAnswerBytes;
  const clock = settings.clock;
  const toolkit = options.toolkit;
  const store = options.store ?? new MemorySuspensionStore();
  const content = new ContentBound(options.content);
  const waitFor = settings.waitFor;
  const maxChain = settings.maxChain;
  const formatRefusal = settings.formatRefusal;
  const binding = new Binding(options.bindingKey);
  const observers = new Observers(toolkit);
  const telemetry = new Telemetry(options.telemetry, 'ResumeCoordinator');
  const recorder = new Recorder(store, binding, clock);
  const automatic = options.automaticAnswers;
  if (automatic !== undefined) checkAutomaticAnswers(automatic);
  const authority = new Authority({
    store,
    ...(settings.policy ? { policy: settings.policy } : {}),
    separationOfDuties: settings.separationOfDuties,
    clock,
    onRefused: (call, refusal) => observers.refused(call, refusal),
  });
  const resolution = new Resolution({
    authority,
    toolkit,
    store,
    leaseMs: settings.leaseMs,
    clock,
    maxChain,
    maxAnswerBytes,
    formatRefusal,
    binding,
    telemetry,
    content,
    onSettled: (claim, settlement) => observers.settlement(claim, settlement, clock.now()),
    onSigned: (call) => observers.signed(call),
  });
  const standing = new StandingAnswers({
    store,
    clock,
    resolution,
    authority,
    ...(automatic ? { automatic } : {}),
    onGranted: (grant) => observers.granted(grant),
    onRevoked: (grant) => observers.revoked(grant),
  });
  const sweeper = new Sweeper(store, clock, resolution, observers);
  return {
    store,
    toolkit,
    content,
    waitFor,
    maxChain,
    formatRefusal,
    binding,
    resolution,
    recorder,
    clock,
    maxAnswerBytes,
    observers,
    telemetry,
    authority,
    standing,
    sweeper,
  };
}
