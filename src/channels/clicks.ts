import { AlreadyResolvedError, AnswerRefusedError, UnknownSuspensionError } from '../errors';
import type { DeliveryStore } from '../deliveries/store';
import type { AgentRunner } from '../runner/agent-runner';
import { answerAs } from '../runner/answer-as';
import type { Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { APPROVE_ACTION } from './card';
import type { ActionEventLike } from './peer';

/** Who clicked, as the platform verified them (its signed request or token, checked by the adapter). */
export interface PlatformUser {
  /** The adapter's name: `slack`, `teams`, `gchat`. */
  platform: string;
  /** The platform's id of the user (Slack's `U…`, Teams' `29:…` id of the activity's `from`, Google Chat's `users/…`). */
  id: string;
  /** Their display name, as the platform gave it: for showing, never for deciding. */
  name: string;
}

/** What a click needs of the channel. */
export interface ClickParts {
  host: AgentRunner | ResumeCoordinator;
  store: DeliveryStore;
  principalOf(user: PlatformUser): Principal | undefined | Promise<Principal | undefined>;
  /** Brings the call's cards to its state now (after an answer). */
  refresh(callId: string): Promise<void>;
  /** A failure the clicker is not told the details of. */
  fail(error: unknown): void;
  /** The request a click on `callId`'s card answers: the one the root's run surfaced it as, else itself. */
  outermost(callId: string): Promise<string>;
}

/** A clicker told privately: the text goes to them alone (an ephemeral message). */
export type Tell = (text: string) => Promise<void>;

/** What a refused answerer is told when the platform user maps to no principal. */
export const UNMAPPED = 'You are not mapped to anyone who may answer requests here.';

/**
 * Who answers a call from a platform, checked in this one place for a click and for a modal's
 * submission: the call must have a card this channel posted on that platform (the message the
 * click came from, when the platform names one: a forged call id is refused), and the verified
 * platform user must map to a principal. `refused` says which check failed.
 */
export async function answererOf(
  parts: Pick<ClickParts, 'store' | 'principalOf'>,
  from: { callId: string; platform: string; user: { userId: string; fullName: string }; messageId?: string },
): Promise<{ principal: Principal } | { refused: 'card' | 'unmapped' }> {
  const { callId, platform, user, messageId } = from;
  const cards = callId === '' ? [] : await parts.store.listDeliveries({ callId });
  const posted = cards.some(
    (card) => card.platform === platform && card.message !== undefined && (messageId === undefined || card.message.id === messageId),
  );
  if (!posted) return { refused: 'card' };
  const principal = await parts.principalOf({ platform, id: user.userId, name: user.fullName });
  return principal ? { principal } : { refused: 'unmapped' };
}

/**
 * Who clicked a button on which call, checked once for every button (Approve, Decline, Edit)
 * by {@link answererOf}, against the message the button is on. Without a `principal` the
 * clicker was refused, and already told why.
 */
export async function clickerOf(
  parts: ClickParts,
  event: ActionEventLike,
): Promise<{ callId: string; platform: string; principal?: Principal; tell: Tell }> {
  const tell: Tell = async (text) => {
    await event.adapter.postEphemeral?.(event.threadId, event.user.userId, text);
  };
  const callId = event.value ?? '';
  const platform = event.adapter.name;
  const who = await answererOf(parts, { callId, platform, user: event.user, messageId: event.messageId });
  if ('refused' in who) {
    await tell(who.refused === 'card' ? 'This button is not on a request this app posted here.' : UNMAPPED);
    return { callId, platform, tell };
  }
  return { callId, platform, principal: who.principal, tell };
}

/**
 * A click on Approve or Decline: the card must be one this channel posted for the call the
 * button names (a forged call id is refused), the verified user must map to a principal, and
 * the answer goes through `answerAs` like every other door's (the answer policy, separation of
 * duties, quorum signatures, expiry, exactly once). Whoever is refused is told so privately (an
 * ephemeral message), and nothing is stored for them; every card of the call is then updated.
 */
export async function click(parts: ClickParts, event: ActionEventLike): Promise<void> {
  const clicked = await clickerOf(parts, event);
  if (!clicked.principal) return;
  const { callId, platform, principal, tell } = clicked;
  const ok = event.actionId === APPROVE_ACTION;
  // A card of a sub-agent's own request (posted before its run surfaced it) answers the surfaced
  // one: the root's runner resumes the child, which a direct answer to the child's would bypass.
  const id = await parts.outermost(callId);
  try {
    const answered = await answerAs(parts.host, ok ? { id, ok } : { id, ok, reason: 'declined' }, {
      by: principal,
      ...(ok ? {} : { comment: `declined in ${platform}` }),
    });
    if (answered.call.status === 'expired') await tell('This request expired before your answer.');
    else if (!answered.won) await tell(`Already answered${answered.winner ? ` by ${answered.winner.name ?? answered.winner.id}` : ''}.`);
  } catch (error) {
    if (error instanceof AnswerRefusedError) await tell(`You may not answer this request: ${error.reason}`);
    else if (error instanceof AlreadyResolvedError) await tell('This request was already answered.');
    else if (error instanceof UnknownSuspensionError) await tell('This request is no longer stored.');
    else {
      parts.fail(error);
      await tell('Your answer could not be recorded; try again.');
    }
  }
  await parts.refresh(id);
  if (id !== callId) await parts.refresh(callId);
}
