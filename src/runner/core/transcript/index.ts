export type { ModelCall, BeforeModel, AfterModel } from './hooks';
export { trimToTokens, summarizeOlder, trimExchanges, roughTokens } from './trim';
export type { TrimOptions, SummarizeOptions, TokenEstimate } from './trim';
