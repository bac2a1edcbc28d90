/**
 * A runner given skills: the catalog follows its system prompt (upstream SPEC §0.10), and the
 * model loads a skill through the `skill` tool, over real HTTP to a model server on 127.0.0.1.
 */
import * as path from 'node:path';
import { Toolkit, defineTool } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { SKILLS_PROMPT_PREAMBLE, loadSkills } from 'toolnexus-ts/skills';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const SKILLS_DIR = path.join(__dirname, '..', 'fixtures', 'skills');

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('AgentRunner with skills', () => {
  it('puts the catalog after the system prompt and serves the skill tool to the model', async () => {
    server = await startMockServer([openaiCalls([{ id: 'c1', name: 'skill', args: { name: 'hello-world' } }]), openaiText('Hello, Ada!')]);
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
    const toolkit = new Toolkit();
    const skills = loadSkills(SKILLS_DIR);
    const result = await new AgentRunner({ model, toolkit, skills, systemPrompt: 'You are helpful.' }).run('greet Ada');

    expect(result.status).toBe('done');
    const [first, second] = server.requests;
    const messages = first?.body.messages as Array<{ role: string; content: string }>;
    expect(messages[0]).toEqual({
      role: 'system',
      content: `You are helpful.\n\n${SKILLS_PROMPT_PREAMBLE}\n\n## Available Skills\n- **hello-world**: ${skills.skills[0]?.description ?? ''}`,
    });
    const tools = first?.body.tools as Array<{ function: { name: string } }>;
    expect(tools.map((tool) => tool.function.name)).toEqual(['skill']);
    const toolMessage = (second?.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool');
    expect(toolMessage?.content.startsWith('<skill_content name="hello-world">\n# Skill: hello-world\n')).toBe(true);
  });

  it("keeps a `skill` tool already registered, and the prompt alone when there's none", async () => {
    server = await startMockServer([openaiText('ok')]);
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
    const own = defineTool({ name: 'skill', description: 'mine', run: () => 'mine' });
    const toolkit = new Toolkit().register(own);
    await new AgentRunner({ model, toolkit, skills: loadSkills({ skills: [{ name: 'a', description: 'A', content: 'a' }] }) }).run('hi');
    expect(toolkit.get('skill')?.description).toBe('mine');
    const messages = server.requests[0]?.body.messages as Array<{ role: string; content: string }>;
    expect(messages[0]?.content.startsWith(SKILLS_PROMPT_PREAMBLE)).toBe(true);
  });
});
