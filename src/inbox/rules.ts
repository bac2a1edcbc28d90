import { InvalidArgumentError } from '../errors';
import type { Principal } from '../suspension/audit';
import type { SuspendedCall } from '../suspension/store';

/** What a principal may do to a suspension through the inbox. Seeing it needs only sign-in. */
export type InboxAction = 'answer' | 'cancel';

/**
 * One grant: these principals may take these actions on suspensions of these kinds and
 * tools. An absent field matches everything; `'*'` says so explicitly.
 */
export interface InboxRule {
  /** Principal ids. */
  principals: readonly string[] | '*';
  /** Request kinds (`approval`, `input`, ...). */
  kinds?: readonly string[] | '*';
  /** Tool names. */
  tools?: readonly string[] | '*';
  /** Default both. */
  actions?: readonly InboxAction[];
}

/** A rule as code, for what a list cannot say (an amount limit, a team lookup). */
export type InboxAllow = (principal: Principal, call: SuspendedCall, action: InboxAction) => boolean | Promise<boolean>;

const ACTIONS: readonly InboxAction[] = ['answer', 'cancel'];

/**
 * Decides who may answer or cancel what. No rules: every signed-in principal may do both.
 * Rules: an action is allowed when at least one rule grants it (nothing else is).
 */
export class InboxRules {
  private readonly allow?: InboxAllow;
  private readonly list?: readonly InboxRule[];

  constructor(rules: readonly InboxRule[] | InboxAllow | undefined) {
    if (rules === undefined) return;
    if (typeof rules === 'function') {
      this.allow = rules;
      return;
    }
    if (!Array.isArray(rules))
      throw new InvalidArgumentError('rules must be an array of { principals, kinds?, tools?, actions? } or a function');
    const list = rules as readonly InboxRule[];
    list.forEach((rule, index) => checkRule(rule, index));
    this.list = list.map((rule) => ({ ...rule }));
  }

  async allows(principal: Principal, call: SuspendedCall, action: InboxAction): Promise<boolean> {
    if (this.allow) return (await this.allow(principal, call, action)) === true;
    if (!this.list) return true;
    return this.list.some(
      (rule) =>
        matches(rule.principals, principal.id) &&
        matches(rule.kinds, call.request.kind) &&
        matches(rule.tools, call.tool) &&
        (rule.actions ?? ACTIONS).includes(action),
    );
  }

  /** The actions `principal` may take on `call` now (none once it is settled). */
  async actionsOn(principal: Principal, call: SuspendedCall): Promise<InboxAction[]> {
    if (call.status !== 'pending') return [];
    const allowed: InboxAction[] = [];
    for (const action of ACTIONS) if (await this.allows(principal, call, action)) allowed.push(action);
    return allowed;
  }
}

function matches(list: readonly string[] | '*' | undefined, value: string): boolean {
  return list === undefined || list === '*' || list.includes(value);
}

function checkRule(rule: InboxRule, index: number): void {
  const where = `inbox rule #${index + 1}`;
  if (typeof rule !== 'object' || rule === null) throw new InvalidArgumentError(`${where} must be an object`);
  const listOk = (value: unknown) => value === '*' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  if (!listOk(rule.principals)) throw new InvalidArgumentError(`${where}: principals must be '*' or an array of principal ids`);
  for (const key of ['kinds', 'tools'] as const) {
    if (rule[key] !== undefined && !listOk(rule[key]))
      throw new InvalidArgumentError(`${where}: ${key} must be '*' or an array of strings`);
  }
  if (
    rule.actions !== undefined &&
    !(Array.isArray(rule.actions) && (rule.actions as unknown[]).every((a) => ACTIONS.includes(a as InboxAction)))
  ) {
    throw new InvalidArgumentError(`${where}: actions must be an array of 'answer' and 'cancel'`);
  }
}
