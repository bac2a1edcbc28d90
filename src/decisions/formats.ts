import type { ChatMessage } from '../models/types';
import type { DecisionLabel, DecisionRow } from './row';

/**
 * The shape rows are exported in: this library's own (`toolnexus`, the published JSON Schema),
 * or what an evaluation tool's datasets import (docs/operating.md, "Decisions as evaluation data").
 */
export type DecisionFormat = 'toolnexus' | 'evalite' | 'langsmith' | 'braintrust';

/** What the model saw and did: the input of an evaluation ("would it have made this call?"). */
export type DecisionInput = {
  tool: string;
  /** The call's arguments as the model made them, redacted. */
  args: unknown;
  /** The request the call raised. */
  prompt: string;
  /** The transcript that led to the call (redacted, bounded), when the run's checkpoint had it. */
  context?: ChatMessage[];
};

/** What the person decided: the reference an evaluation compares the model (or a policy) with. */
export type DecisionExpected = {
  label: DecisionLabel;
  /** With `edited`: the arguments the approver ran instead, redacted. */
  editedArgs?: unknown;
  comment?: string;
};

/** Everything else of a row, kept beside a dataset example for filtering and slicing. */
export type DecisionMetadata = Omit<DecisionRow, 'format' | 'tool' | 'call' | 'context' | 'decision'> & {
  decision: Omit<DecisionRow['decision'], 'label' | 'editedArgs' | 'comment'>;
};

/** evalite's data shape (`Evalite.DataShape`): `{ input, expected }`. */
export type EvaliteDecisionRow = { input: DecisionInput; expected: DecisionExpected };

/** A LangSmith example (`ExampleCreate`, and a dataset's JSONL upload): `{ inputs, outputs, metadata }`. */
export type LangSmithDecisionRow = { inputs: DecisionInput; outputs: DecisionExpected; metadata: DecisionMetadata };

/** A Braintrust dataset record (`dataset.insert`): `{ id, input, expected, metadata, tags }`. */
export type BraintrustDecisionRow = {
  /** The request's id: inserting the same row again updates it rather than adding one. */
  id: string;
  input: DecisionInput;
  expected: DecisionExpected;
  metadata: DecisionMetadata;
  /** The label, who settled it (`person`, `automatic`, `grant`, `none`) and `shadow-agreed`/`shadow-disagreed`. */
  tags: string[];
};

/** A row in each format. */
export interface DecisionRows {
  toolnexus: DecisionRow;
  evalite: EvaliteDecisionRow;
  langsmith: LangSmithDecisionRow;
  braintrust: BraintrustDecisionRow;
}

const FORMATS: readonly DecisionFormat[] = ['toolnexus', 'evalite', 'langsmith', 'braintrust'];

/** Whether `value` names a format. */
export function isDecisionFormat(value: unknown): value is DecisionFormat {
  return FORMATS.includes(value as DecisionFormat);
}

function parts(row: DecisionRow): { input: DecisionInput; expected: DecisionExpected; metadata: DecisionMetadata } {
  const { format: _format, tool, call, context, decision, ...rest } = row;
  const { label, editedArgs, comment, ...how } = decision;
  const input: DecisionInput = { tool, args: call.args, prompt: call.prompt };
  if (context !== undefined) input.context = context.messages;
  const expected: DecisionExpected = { label };
  if (editedArgs !== undefined) expected.editedArgs = editedArgs;
  if (comment !== undefined) expected.comment = comment;
  return { input, expected, metadata: { ...rest, decision: how } };
}

/** `row` in `format`. */
export function inFormat<F extends DecisionFormat>(row: DecisionRow, format: F): DecisionRows[F];
export function inFormat(row: DecisionRow, format: DecisionFormat): DecisionRows[DecisionFormat] {
  if (format === 'toolnexus') return row;
  const { input, expected, metadata } = parts(row);
  if (format === 'evalite') return { input, expected };
  if (format === 'langsmith') return { inputs: input, outputs: expected, metadata };
  const agreed = row.decision.automatic?.agreed;
  const tags = [row.decision.label, row.decision.source, ...(agreed === undefined ? [] : [agreed ? 'shadow-agreed' : 'shadow-disagreed'])];
  return { id: row.id, input, expected, metadata, tags };
}
