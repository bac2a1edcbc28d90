/**
 * Context management: a 1,000-turn session trimmed to a token budget with `trimToTokens`,
 * every tool call still paired and signed thinking still with its turn, checked on the wire
 * against the OpenAI chat-completions and Anthropic messages rules; `summarizeOlder` asking
 * a model; `afterModel` changing an answer. Models are real HTTP servers on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicModel, OpenAIChatModel, type ChatMessage } from 'toolnexus-ts/models';
import { roughTokens, summarizeOlder, trimToTokens, trimExchanges, type ModelCall } from 'toolnexus-ts/agents';
import { buildChatAgent, type ChatAgent } from '../fixtures/chat/agent';
import { anthropicText, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let dir: string;
const servers: MockServer[] = [];
const agents: ChatAgent[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-context-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(agents.splice(0).map((a) => a.store.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** 1,000 turns: a lookup call with its result, signed thinking on every third call's turn, then the answer. */
function longThread(turns = 1000): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let i = 0; i < turns; i++) {
    const id = `toolu_${i}`;
    const args = JSON.stringify({ order: `o-${i}` });
    const thinking = i % 3 === 0;
    messages.push({ role: 'user', content: `lookup o-${i}` });
    messages.push({
      role: 'assistant',
      content: '',
      toolCalls: [{ id, name: 'lookup_order', arguments: args }],
      ...(thinking
        ? {
            items: [
              { provider: 'anthropic', type: 'thinking', data: { type: 'thinking', thinking: `think ${i}`, signature: `sig-${i}` } },
              { provider: 'anthropic', type: 'tool_use', data: { type: 'tool_use', id, name: 'lookup_order', input: { order: `o-${i}` } } },
            ],
          }
        : {}),
    });
    messages.push({ role: 'tool', callId: id, name: 'lookup_order', content: `{"order":"o-${i}","status":"shipped"}`, isError: false });
    messages.push({ role: 'assistant', content: `Order o-${i} has shipped.` });
  }
  return messages;
}

async function agentWith(where: string, options: Parameters<typeof buildChatAgent>[3]): Promise<ChatAgent> {
  const agent = buildChatAgent(where, join(dir, 'ledger'), 'http://127.0.0.1:9', options);
  agents.push(agent);
  const at = new Date().toISOString();
  expect(await agent.runner.sessions!.saveSession({ id: 'long', version: 1, messages: longThread(), createdAt: at, updatedAt: at })).toBe(
    true,
  );
  return agent;
}

type Wire = Record<string, unknown>;

/** OpenAI chat completions: every assistant tool_call answered by a tool message right after it, no tool message without its call. */
function checkOpenAI(messages: Wire[]): void {
  expect(messages[0]).toEqual({ role: 'system', content: 'You are a support bot.' });
  let open = new Set<string>();
  for (const message of messages.slice(1)) {
    if (message.role === 'tool') {
      expect(open.has(message.tool_call_id as string)).toBe(true);
      open.delete(message.tool_call_id as string);
      continue;
    }
    expect(open.size).toBe(0);
    open = new Set(((message.tool_calls as Wire[] | undefined) ?? []).map((call) => call.id as string));
  }
  expect(open.size).toBe(0);
  expect(messages[1]?.role).toBe('user');
}

/** Anthropic messages: opens with the user, roles alternate, each tool_use answered in the next user message, thinking first in its turn. */
function checkAnthropic(messages: Wire[]): void {
  expect(messages[0]?.role).toBe('user');
  messages.forEach((message, i) => {
    if (i > 0) expect(message.role).not.toBe(messages[i - 1]?.role);
    if (message.role !== 'assistant') return;
    const blocks = message.content as Wire[];
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string);
    const next = messages[i + 1]?.content;
    const results = Array.isArray(next) ? (next as Wire[]).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : [];
    expect(results).toEqual(uses);
    for (const id of uses) {
      if (Number(id.slice('toolu_'.length)) % 3 === 0)
        expect(blocks[0]).toMatchObject({ type: 'thinking', signature: `sig-${id.slice(6)}` });
    }
  });
}

it.each(['openai', 'anthropic'])(
  'a 1,000-turn session trimmed to a token budget: every tool call paired on the %s wire',
  async (provider) => {
    const server = await startMockServer(provider === 'openai' ? openaiText('Hi again.') : anthropicText('Hi again.'));
    servers.push(server);
    const model =
      provider === 'openai'
        ? new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } })
        : new AnthropicModel({
            baseUrl: server.url,
            apiKey: 'ak-test',
            model: 'claude-test',
            maxTokens: 4096,
            thinking: { type: 'enabled', budget_tokens: 1024 },
            retry: { maxAttempts: 1 },
          });
    const budget = 3_000;
    const agent = await agentWith(join(dir, `${provider}.db`), { model, beforeModel: trimToTokens({ maxTokens: budget }) });
    const result = await agent.runner.run('hello', { session: 'long' });
    expect(result.text).toBe('Hi again.');
    const sent = server.requests[0]?.body.messages as Wire[];
    if (provider === 'openai') checkOpenAI(sent);
    else {
      expect(server.requests[0]?.body.system).toBe('You are a support bot.');
      checkAnthropic(sent);
    }
    // Trimmed: fewer turns than stored, within the budget, the newest kept, the thread itself untouched.
    const kept = trimExchanges([...longThread(), { role: 'user', content: 'hello' }], budget).kept;
    expect(kept.reduce((sum, m) => sum + roughTokens(m), 0)).toBeLessThanOrEqual(budget);
    const users = sent.filter((m) => m.role === 'user' && typeof m.content === 'string');
    expect(users.length).toBe(kept.filter((m) => m.role === 'user').length);
    expect(users.length).toBeGreaterThan(5);
    expect(users.length).toBeLessThan(1000);
    expect(users[users.length - 1]?.content).toBe('hello');
    expect((await agent.runner.sessions!.loadSession('long'))!.messages).toHaveLength(4002);
  },
);

it('summarizeOlder asks a model for a summary of what it leaves out and sends it first', async () => {
  const main = await startMockServer(openaiText('Hi again.'));
  const summarizer = await startMockServer(openaiText('The user looked up 1,000 orders; all shipped.'));
  servers.push(main, summarizer);
  const summaryModel = new OpenAIChatModel({ baseUrl: `${summarizer.url}/v1`, model: 'small', retry: { maxAttempts: 1 } });
  const agent = await agentWith(join(dir, 's.db'), {
    model: new OpenAIChatModel({ baseUrl: `${main.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
    beforeModel: summarizeOlder({ model: summaryModel, maxTokens: 2_000, maxSourceChars: 5_000 }),
  });
  await agent.runner.run('hello', { session: 'long' });
  expect(summarizer.requests).toHaveLength(1);
  expect((summarizer.requests[0]?.body.messages as Wire[])[1]?.content).toContain('user: lookup o-');
  const sent = main.requests[0]?.body.messages as Wire[];
  expect(sent[1]).toEqual({ role: 'user', content: 'Summary of the earlier conversation:\nThe user looked up 1,000 orders; all shipped.' });
  expect(sent[2]).toMatchObject({ role: 'assistant', content: 'Understood.' });
  checkOpenAI([sent[0] as Wire, ...sent.slice(3)]);
});

it('afterModel sees each answer and may change it; beforeModel sees the turn and a copy of the transcript', async () => {
  const server = await startMockServer(openaiText('Your card 4111 1111 1111 1111 is on file.'));
  servers.push(server);
  const seen: ModelCall[] = [];
  const agent = buildChatAgent('memory', join(dir, 'ledger'), server.url, {
    beforeModel: (call) => {
      seen.push(call);
      call.messages.push({ role: 'user', content: 'mutated' }); // a copy: the run never sees this
    },
    afterModel: (response) => ({ ...response, text: response.text.replace(/\d{4} \d{4} \d{4} (\d{4})/, '**** $1') }),
  });
  agents.push(agent);
  const result = await agent.runner.run('card?', { session: 's' });
  expect(result.text).toBe('Your card **** 1111 is on file.');
  expect(seen.map((c) => [c.turn, c.system, c.tools.length])).toEqual([[1, 'You are a support bot.', 3]]);
  expect(result.messages.map((m) => m.content)).toEqual(['card?', 'Your card **** 1111 is on file.']);
});
