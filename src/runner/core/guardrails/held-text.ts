import type { Emit } from '../live-run';
import type { RunEvent } from '../types';
import type { Judgement } from './check';

/**
 * Checks a turn's text: `text` up to `segment` (the new part); `complete` once the turn's
 * text is whole, `final` when it is also the run's answer.
 */
export type TextCheck = (text: string, segment: string, complete: boolean, final: boolean) => Promise<Judgement>;

/** A sentence ends here: `.`, `!` or `?` before white space, or a line break. */
const BOUNDARY = /[.!?](?=\s)\s*|\n+/g;

/**
 * A turn's streamed text, held until the output guardrails pass it (hold-back). `turn` mode
 * releases the whole text once it passes; `segments` mode checks it at each sentence end, in
 * order, while it streams on, and releases each passing segment. Once a check fails nothing
 * more is released, and what failed never was.
 */
export class HeldText {
  private text = '';
  /** Up to here the text was checked (or is being checked). */
  private checkedTo = 0;
  private chain: Promise<Judgement> = Promise.resolve({ action: 'allow' });
  private failed: Judgement | undefined;

  constructor(
    private readonly mode: 'turn' | 'segments',
    private readonly check: TextCheck,
    private readonly emit: Emit,
  ) {}

  /** What the model call emits: text is held, the rest goes on. */
  readonly events: Emit = (event: RunEvent) => {
    if (event.type !== 'text') return this.emit(event);
    this.text += event.delta;
    if (this.mode === 'segments') this.cut();
  };

  /** The turn's text is whole: the last check, and the release of what passed. */
  async end(final: boolean): Promise<Judgement> {
    if (this.failed) return this.failed;
    const last = await this.chain;
    if (last.action !== 'allow') return last;
    const segment = this.text.slice(this.checkedTo);
    if (this.mode === 'turn' && segment === '') return last;
    this.checkedTo = this.text.length;
    const judgement = await this.check(this.text, segment, true, final);
    if (judgement.action === 'allow' && segment !== '') this.emit({ type: 'text', delta: segment });
    return judgement;
  }

  /** Queues a check of the text up to its last sentence end, when there is a new one. */
  private cut(): void {
    let end = -1;
    BOUNDARY.lastIndex = this.checkedTo;
    for (let match = BOUNDARY.exec(this.text); match !== null; match = BOUNDARY.exec(this.text)) {
      // A boundary at the very end may still grow (more white space): cut before it next time.
      if (match.index + match[0].length < this.text.length) end = match.index + match[0].length;
    }
    if (end <= this.checkedTo) return;
    const from = this.checkedTo;
    this.checkedTo = end;
    const text = this.text.slice(0, end);
    this.chain = this.chain.then(async (before) => {
      if (before.action !== 'allow') return before;
      const judgement = await this.check(text, text.slice(from), false, false);
      if (judgement.action === 'allow') this.emit({ type: 'text', delta: text.slice(from) });
      else this.failed = judgement;
      return judgement;
    });
  }
}
