export type { ModelCall, BeforeModel, AfterModel } from './hooks';
export { trimToTokens, summarizeOlder, trimTurns, roughTokens } from './trim';
export type { TrimOptions, SummarizeOptions, TokenEstimate } from './trim';
