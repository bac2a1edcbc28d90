/*
 * The declarations of root-lazy.js: the real ones, re-exported from the module each name's
 * getter requires (root-lazy.js says why the pair exists). A name added here is added there,
 * with the same module; test/package/lazy-root.test.ts checks they agree.
 */
export { ResumeCoordinator, DEFAULT_LEASE_MS } from './suspension/coordinator';
export { formatRefusal, DEFAULT_MAX_CHAIN } from './suspension/answers';
export { MemoryStore } from './stores/memory/store';
export { redactCall } from './suspension/redact';
export { MAX_COMMENT_LENGTH } from './suspension/audit';
export { SqliteStore } from './stores/sqlite/store';
export { PostgresStore } from './stores/postgres/store';

export { Webhooks } from './webhooks/webhooks';
export { signWebhook, verifyWebhook } from './webhooks/signature';

export { AgentRunner } from './runner/agent-runner';
export { SubAgentInput, SubAgentTool } from './runner/sub-agent';
export { answerAs } from './runner/answer-as';
export { RUN_STATE_FORMAT } from './runner/state';
export { redactRun } from './runner/redact-run';
export { OpenAIChatModel } from './models/openai';
export { OpenAIResponsesModel } from './models/openai-responses';
export { AnthropicModel } from './models/anthropic';
export { GeminiModel } from './models/gemini';
export { FunctionModel } from './models/function';

export { trimToTokens, summarizeOlder, trimExchanges, roughTokens } from './runner/transcript/trim';
