/**
 * The root entry's lazy exports: the names a first Toolkit call does not need (the
 * coordinator and its stores, the runner and its models, webhooks, context strategies). Each
 * is a getter that requires its module the first time the name is read, so
 * `require('toolnexus-ts')` loads the Toolkit's path only (issue 26; docs/design.md, "Entries").
 *
 * Why a hand-written CommonJS file beside a declaration file, and not TypeScript: tsc compiles
 * `export { X } from './x'` to a getter too, but with `require('./x')` at the top of the
 * module, so the load happens at import. A getter in TypeScript would need the name declared
 * as a `const` of the class's type, and a class would stop being a class in the .d.ts. Here
 * `root-lazy.d.ts` re-exports the real declarations (a class stays a class, `typeof`,
 * `instanceof` and `extends` are unchanged) and this file supplies the same names at run time.
 *
 * The rule that keeps the two in step, checked by test/package/lazy-root.test.ts: each name
 * here requires exactly the module `root-lazy.d.ts` re-exports it from. Every `require` is a
 * literal, so bundlers still see (and bundle) each module. `npm run build` copies both files
 * to dist/, as tsc emits neither.
 */
'use strict';
Object.defineProperty(exports, '__esModule', { value: true });

/** Defines `name` on the exports as a getter that loads it once, on first read. */
function lazy(name, load) {
  let loaded = false;
  let value;
  Object.defineProperty(exports, name, {
    enumerable: true,
    get() {
      if (!loaded) {
        value = load();
        loaded = true;
      }
      return value;
    },
  });
}

// Suspending and resuming calls, and the stores that keep them.
lazy('ResumeCoordinator', () => require('./suspension/coordinator').ResumeCoordinator);
lazy('DEFAULT_LEASE_MS', () => require('./suspension/coordinator').DEFAULT_LEASE_MS);
lazy('formatRefusal', () => require('./suspension/answers').formatRefusal);
lazy('DEFAULT_MAX_CHAIN', () => require('./suspension/answers').DEFAULT_MAX_CHAIN);
lazy('MemoryStore', () => require('./stores/memory/store').MemoryStore);
lazy('redactCall', () => require('./suspension/redact').redactCall);
lazy('MAX_COMMENT_LENGTH', () => require('./suspension/audit').MAX_COMMENT_LENGTH);
lazy('SqliteStore', () => require('./stores/sqlite/store').SqliteStore);
lazy('PostgresStore', () => require('./stores/postgres/store').PostgresStore);

// Webhooks.
lazy('Webhooks', () => require('./webhooks/webhooks').Webhooks);
lazy('signWebhook', () => require('./webhooks/signature').signWebhook);
lazy('verifyWebhook', () => require('./webhooks/signature').verifyWebhook);

// Running agents against chat models.
lazy('AgentRunner', () => require('./runner/agent-runner').AgentRunner);
lazy('SubAgentInput', () => require('./runner/sub-agent').SubAgentInput);
lazy('SubAgentTool', () => require('./runner/sub-agent').SubAgentTool);
lazy('answerAs', () => require('./runner/answer-as').answerAs);
lazy('RUN_STATE_FORMAT', () => require('./runner/state').RUN_STATE_FORMAT);
lazy('redactRun', () => require('./runner/redact-run').redactRun);
lazy('OpenAIChatModel', () => require('./models/openai').OpenAIChatModel);
lazy('OpenAIResponsesModel', () => require('./models/openai-responses').OpenAIResponsesModel);
lazy('AnthropicModel', () => require('./models/anthropic').AnthropicModel);
lazy('GeminiModel', () => require('./models/gemini').GeminiModel);
lazy('FunctionModel', () => require('./models/function').FunctionModel);

// Context strategies for the runner's beforeModel hook.
lazy('trimToTokens', () => require('./runner/transcript/trim').trimToTokens);
lazy('summarizeOlder', () => require('./runner/transcript/trim').summarizeOlder);
lazy('trimExchanges', () => require('./runner/transcript/trim').trimExchanges);
lazy('roughTokens', () => require('./runner/transcript/trim').roughTokens);
