/**
 * `toolnexus-ts/decisions`: settled requests as evaluation data (docs/operating.md, "Decisions
 * as evaluation data"): `exportDecisions` streams them in this library's published row
 * (`toolnexus-ts/decisions/schema.json`) or the shapes evalite, LangSmith and Braintrust
 * datasets import; `policyReport` compares a shadow automatic-answer rule with the people.
 */
export { exportDecisions, DEFAULT_DECISION_PAGE_SIZE, MAX_DECISION_PAGE_SIZE } from './export';
export type { ExportDecisionsOptions } from './export';
export { policyReport } from './report';
export type { PolicyReport, PolicyReportOptions, PersonAnswer } from './report';
export { DECISION_ROW_FORMAT } from './row';
export type { DecisionRow, DecisionLabel, DecisionSource, DecisionContext } from './row';
export { DEFAULT_CONTEXT_CHARS, DEFAULT_CONTEXT_MESSAGES } from './context';
export type { ContextBound } from './context';
export type {
  DecisionFormat,
  DecisionRows,
  DecisionInput,
  DecisionExpected,
  DecisionMetadata,
  EvaliteDecisionRow,
  LangSmithDecisionRow,
  BraintrustDecisionRow,
} from './formats';
