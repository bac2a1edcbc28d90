/**
 * The bound for stored results (docs/agents.md, "Rich results"): a halted call whose replay
 * returns a large PNG is stored with at most `maxInlineBytes` of media inline, in the
 * suspension's outcome and in the run's checkpoint, as the rows of a real SQLite file show;
 * the bytes go to a FileContentStore by reference, and a runner built afresh on the same file
 * and directory shows the model the whole image on the next request. Without a content store
 * the image is described in words, never silently dropped.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { defineTool, pending, Toolkit, withContent } from 'toolnexus-ts';
import { FileContentStore, ResumeCoordinator, type ContentOptions } from 'toolnexus-ts/suspension';
import { OpenAIResponsesModel, type ToolMessage } from 'toolnexus-ts/models';
import { AgentRunner, type AgentToolContext } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { responsesCall, responsesJson, responsesMessage } from '../fixtures/runner/provider-replies';
import { makePng } from '../fixtures/png';

const BIG_PNG = makePng(120, 120, [0, 0, 0], true); // noise: ~43 KB that does not compress
const SMALL_PNG = makePng(4, 4);
const BOUND = 16 * 1024;

let dir: string;
const servers: MockServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-rich-bound-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  rmSync(dir, { recursive: true, force: true });
});

function agent(db: string, url: string, content: ContentOptions): { runner: AgentRunner; store: SqliteStore } {
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'screenshot',
      description: 'Takes a screenshot of the customer’s screen, with their consent',
      inputSchema: { type: 'object' },
      run: (_args, ctx?: AgentToolContext) => {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'May we look at your screen?' });
        return withContent('Two screenshots', [
          { type: 'image', data: SMALL_PNG, mimeType: 'image/png', filename: 'thumb.png' },
          { type: 'image', data: BIG_PNG, mimeType: 'image/png', filename: 'screen.png' },
        ]);
      },
    }),
  );
  const store = new SqliteStore({ filename: db });
  const model = new OpenAIResponsesModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'gpt-5', retry: { maxAttempts: 1 } });
  return { runner: new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store, content }) }), store };
}

async function haltThenResume(content: ContentOptions): Promise<{ server: MockServer; db: string; runId: string; pendingId: string }> {
  const server = await startMockServer([
    responsesJson([responsesCall('call_1', 'screenshot', {})]),
    responsesJson([responsesMessage('I can see the error.')]),
  ]);
  servers.push(server);
  const db = join(dir, 'runs.db');
  const first = agent(db, server.url, content);
  const halted = await first.runner.run('My screen shows an error.', { runId: 'run-screen' });
  await first.store.close();
  expect(halted.status).toBe('halted');
  // Answered by a runner built afresh on the same file and directory (what another process does).
  const second = agent(db, server.url, content);
  const done = await second.runner.resume({ id: halted.pending!.id, ok: true });
  await second.store.close();
  expect(done.status).toBe('done');
  return { server, db, runId: 'run-screen', pendingId: halted.pending!.id };
}

function rows(db: string, pendingId: string, runId: string): { outcome: string; state: string } {
  const sqlite = new Database(db, { readonly: true });
  try {
    const { outcome } = sqlite.prepare('SELECT outcome FROM suspensions WHERE id = ?').get(pendingId) as { outcome: string };
    const { state } = sqlite.prepare('SELECT state FROM runs WHERE run_id = ?').get(runId) as { state: string };
    return { outcome, state };
  } finally {
    sqlite.close();
  }
}

/** The tool result the request after the resume carried. */
function functionCallOutput(server: MockServer): unknown {
  return (server.requests[1]?.body.input as Array<{ type: string; output?: unknown }>).find((i) => i.type === 'function_call_output')
    ?.output;
}

describe('a large image in a stored result', () => {
  it('is kept by reference in the outcome and the checkpoint, and the model still sees all of it', async () => {
    expect(BIG_PNG.length).toBeGreaterThan(2 * BOUND);
    const directory = join(dir, 'media');
    const { server, db, runId, pendingId } = await haltThenResume({ maxInlineBytes: BOUND, store: new FileContentStore({ directory }) });

    const { outcome, state } = rows(db, pendingId, runId);
    // The rows hold the small image inline and the large one by reference: well under its size.
    expect(outcome.length).toBeLessThan(BIG_PNG.length / 2);
    expect(state.length).toBeLessThan(BIG_PNG.length / 2);
    expect(outcome).toContain(SMALL_PNG.toString('base64'));
    expect(outcome).not.toContain(BIG_PNG.toString('base64').slice(0, 200));
    const toolMessage = (JSON.parse(state) as { messages: ToolMessage[] }).messages.find((m) => m.role === 'tool');
    expect(toolMessage?.media).toEqual([
      { type: 'image', data: SMALL_PNG.toString('base64'), mimeType: 'image/png', filename: 'thumb.png' },
      {
        type: 'image',
        mimeType: 'image/png',
        ref: expect.stringMatching(/^sha256-[0-9a-f]{64}$/) as string,
        size: BIG_PNG.length,
        filename: 'screen.png',
      },
    ]);
    expect(readdirSync(directory)).toEqual([(toolMessage?.media?.[1] as { ref: string }).ref]);

    // The request after the resume carries both images whole, loaded back from the directory.
    const output = functionCallOutput(server);
    expect(output).toEqual([
      { type: 'input_text', text: 'Two screenshots' },
      { type: 'input_image', image_url: `data:image/png;base64,${SMALL_PNG.toString('base64')}` },
      { type: 'input_image', image_url: `data:image/png;base64,${BIG_PNG.toString('base64')}` },
    ]);
  });

  it('without a content store, is described in words where it was, in the rows and to the model', async () => {
    const { server, db, runId, pendingId } = await haltThenResume({ maxInlineBytes: BOUND });
    const { outcome, state } = rows(db, pendingId, runId);
    expect(outcome.length).toBeLessThan(BOUND * 2);
    expect(state.length).toBeLessThan(BOUND * 2);
    const words = `[image screen.png (image/png, ${BIG_PNG.length} bytes) left out: stored results keep at most ${BOUND} bytes of media inline, and no content store was given]`;
    expect(JSON.parse(outcome)).toMatchObject({
      metadata: {
        content: [
          { type: 'image', filename: 'thumb.png' },
          { type: 'text', text: words },
        ],
      },
    });
    const output = functionCallOutput(server);
    expect(output).toEqual([
      { type: 'input_text', text: 'Two screenshots' },
      { type: 'input_image', image_url: `data:image/png;base64,${SMALL_PNG.toString('base64')}` },
    ]);
  });
});
