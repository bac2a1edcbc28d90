/**
 * `toolnexus-ts/dbos`: an `AgentRunner`'s runs as DBOS Transact workflows (docs/deploying.md,
 * "Runs on DBOS"). Needs the optional peer `@dbos-inc/dbos-sdk`.
 */
export { DbosRuns, ANSWER_TOPIC } from './runs';
export type { DbosRunSummary, DbosRunsOptions } from './runs';
