import { InvalidArgumentError } from '../errors';
import type { Answer } from '../results/wire';
import type { Principal } from './audit';
import type { SuspendedCall } from './store';

/** What an answer does to a suspension: answers it (approve, decline, give a value) or cancels it. */
export type AnswerAction = 'answer' | 'cancel';

/** An answer policy's verdict: allowed, or refused with the reason the person refused is told. */
export type AnswerDecision = 'allow' | { deny: string };

/**
 * What an {@link AnswerPolicy} judges: who answers, the call that asked, and the answer.
 * `call` is the call that asked, found down a sub-agent's path (a request surfaced by a
 * sub-agent is judged by the tool and kind that raised it, never by the sub-agent tool's
 * name); `surfaced` is the call the answer names.
 */
export interface AnswerQuestion {
  principal: Principal;
  /** The call that asked: `surfaced` itself, or the sub-agent call at the end of its path. */
  call: SuspendedCall;
  /** The call the answer names. */
  surfaced: SuspendedCall;
  /** The sub-agent tools from the surfaced call down to the one that asked (empty when it asked itself). */
  path: readonly string[];
  answer: Answer;
  action: AnswerAction;
}

/**
 * Who may answer what: consulted by the `ResumeCoordinator` inside the path of every answer
 * (resolve, cancel, answerAs, and so every runner, inbox, chat, CLI, MCP server and adapter
 * built on it), before the claim. A refusal changes nothing stored and reaches the caller as
 * `AnswerRefusedError` (docs/who-may-answer.md). Must not throw; a throw refuses the answer.
 */
export interface AnswerPolicy {
  (question: AnswerQuestion): AnswerDecision | Promise<AnswerDecision>;
  /**
   * The ids of the principals this policy lets answer `call` (the call that asked), where it can
   * list them; `undefined` when it cannot (a rule for anyone, a judgement by amount). Only for
   * telling people (the channels' `route`, docs/channels.md "Routing"): never a permission, the
   * policy itself still judges every answer. {@link rulesPolicy} gives it.
   */
  principalsFor?(call: SuspendedCall): readonly string[] | undefined;
}

/**
 * One grant of {@link rulesPolicy}: these principals may take these actions on suspensions of
 * these kinds and tools. An absent field matches everything; `'*'` says so explicitly.
 */
export interface AnswerRule {
  /** Principal ids. */
  principals: readonly string[] | '*';
  /** Request kinds (`approval`, `input`, ...). */
  kinds?: readonly string[] | '*';
  /** Tool names: of the call that asked (a sub-agent's request by its own tool). */
  tools?: readonly string[] | '*';
  /** Default both. */
  actions?: readonly AnswerAction[];
}

const ACTIONS: readonly AnswerAction[] = ['answer', 'cancel'];

/**
 * The list-of-grants policy: an answer is allowed when at least one rule grants its action to
 * its principal for the asking call's kind and tool; nothing else is.
 *
 * @example
 * ```ts
 * const policy = rulesPolicy([
 *   { principals: ['manager:ann'], tools: ['refund'], kinds: ['approval'] },
 *   { principals: '*', kinds: ['input'] },
 * ])
 * ```
 * @throws {@link InvalidArgumentError} a malformed rule.
 */
export function rulesPolicy(rules: readonly AnswerRule[]): AnswerPolicy {
  if (!Array.isArray(rules)) throw new InvalidArgumentError('rulesPolicy takes an array of { principals, kinds?, tools?, actions? }');
  const list = (rules as readonly AnswerRule[]).map((rule, index) => {
    checkRule(rule, index);
    return { ...rule };
  });
  const policy: AnswerPolicy = ({ principal, call, action }) => {
    const granted = list.some(
      (rule) =>
        matches(rule.principals, principal.id) &&
        matches(rule.kinds, call.request.kind) &&
        matches(rule.tools, call.tool) &&
        (rule.actions ?? ACTIONS).includes(action),
    );
    return granted ? 'allow' : { deny: `${principal.id} may not ${action} ${call.request.kind} requests of ${call.tool}` };
  };
  // Who the rules let answer this call: each principal a matching rule names; none listed when one grants anyone.
  policy.principalsFor = (call) => {
    const ids = new Set<string>();
    for (const rule of list) {
      if (!matches(rule.kinds, call.request.kind) || !matches(rule.tools, call.tool) || !(rule.actions ?? ACTIONS).includes('answer'))
        continue;
      if (rule.principals === '*') return undefined;
      for (const id of rule.principals) ids.add(id);
    }
    return [...ids];
  };
  return policy;
}

function matches(list: readonly string[] | '*' | undefined, value: string): boolean {
  return list === undefined || list === '*' || list.includes(value);
}

function checkRule(rule: AnswerRule, index: number): void {
  const where = `answer rule #${index + 1}`;
  if (typeof rule !== 'object' || rule === null) throw new InvalidArgumentError(`${where} must be an object`);
  const listOk = (value: unknown) => value === '*' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  if (!listOk(rule.principals)) throw new InvalidArgumentError(`${where}: principals must be '*' or an array of principal ids`);
  for (const key of ['kinds', 'tools'] as const) {
    if (rule[key] !== undefined && !listOk(rule[key]))
      throw new InvalidArgumentError(`${where}: ${key} must be '*' or an array of strings`);
  }
  if (
    rule.actions !== undefined &&
    !(Array.isArray(rule.actions) && (rule.actions as unknown[]).every((a) => ACTIONS.includes(a as AnswerAction)))
  ) {
    throw new InvalidArgumentError(`${where}: actions must be an array of 'answer' and 'cancel'`);
  }
}
