/**
 * The shapes evaluation tools import (docs/operating.md, "Decisions as evaluation data"):
 * - LangSmith: the `langsmith` package's own `Client.createExamples` takes the exported rows
 *   as they are (`ExampleCreate`, checked by the compiler) and uploads them to a server on
 *   127.0.0.1 standing in for LangSmith's API, which receives each row's inputs, outputs and
 *   metadata unchanged.
 * - evalite: the rows are its published type, `Evalite.DataShape` (evalite 0.19.0, a
 *   devDependency), checked by the compiler; test/decisions/evalite.test.ts runs an eval over
 *   them with evalite's own code.
 * - Braintrust: `dataset.insert({ id, input, expected, metadata, tags })`, checked by shape.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { Client } from 'langsmith';
import type { ExampleCreate } from 'langsmith/schemas';
import type { Evalite } from 'evalite';
import { MemoryStore } from 'toolnexus-ts/memory';
import { exportDecisions, type EvaliteDecisionRow, type LangSmithDecisionRow } from 'toolnexus-ts/decisions';
import { listening } from '../fixtures/listen';
import { cardOf, seedDecisions, toolkit } from '../fixtures/decisions';

/** evalite's shape of each entry of an eval's `data`. */
type DataShape<TInput, TExpected> = Evalite.DataShape<TInput, TExpected>;

const SINCE = '2000-01-01T00:00:00Z';
const DATASET = '6f1c0c58-3a52-4a63-9a57-0d5f3c7e2b11';
const COUNT = 60;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function all<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

function body(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** LangSmith's API as far as `createExamples` uses it: server info, the multipart upload, reading an example back. */
async function langsmithServer(): Promise<{
  url: string;
  examples: Map<string, { inputs: unknown; outputs: unknown; metadata: unknown }>;
}> {
  const examples = new Map<string, { inputs: unknown; outputs: unknown; metadata: unknown }>();
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      const send = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.method === 'GET' && url === '/info')
        return send(200, { version: 'test', instance_flags: { dataset_examples_multipart_enabled: true } });
      if (request.method === 'POST' && url === `/v1/platform/datasets/${DATASET}/examples`) {
        // The SDK's own multipart body, parsed as any server would: one part per example, its inputs and outputs beside it.
        const form = await new Response(await body(request), {
          headers: { 'content-type': request.headers['content-type'] ?? '' },
        }).formData();
        const ids: string[] = [];
        for (const [name, part] of form.entries()) {
          if (name.includes('.')) continue;
          const read = async (key: string) => JSON.parse(await (form.get(key) as Blob).text()) as unknown;
          const main = JSON.parse(await (part as Blob).text()) as { metadata?: unknown };
          examples.set(name, { inputs: await read(`${name}.inputs`), outputs: await read(`${name}.outputs`), metadata: main.metadata });
          ids.push(name);
        }
        return send(201, { example_ids: ids, count: ids.length });
      }
      const read = /^\/examples\/([0-9a-f-]{36})$/.exec(url);
      if (request.method === 'GET' && read && examples.has(read[1]!)) {
        const example = examples.get(read[1]!)!;
        return send(200, {
          id: read[1],
          dataset_id: DATASET,
          inputs: example.inputs,
          outputs: example.outputs,
          metadata: example.metadata,
        });
      }
      send(404, { detail: `not here: ${request.method} ${url}` });
    })();
  });
  return { url: await listening(server, closers), examples };
}

it('LangSmith: the langsmith package uploads the exported rows as they are, and reads them back unchanged', async () => {
  const store = new MemoryStore();
  await seedDecisions(store, COUNT);
  const rows = await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), format: 'langsmith' }));
  expect(rows).toHaveLength(COUNT);
  // The compiler checks the row is an ExampleCreate: no conversion between the export and the SDK.
  const uploads: ExampleCreate[] = rows.map((row: LangSmithDecisionRow) => ({ ...row, dataset_id: DATASET }));
  const { url, examples } = await langsmithServer();
  const client = new Client({ apiUrl: url, apiKey: 'test-key', autoBatchTracing: false });
  const created = await client.createExamples(uploads);
  expect(created).toHaveLength(COUNT);
  expect([...examples.values()]).toEqual(rows.map((row) => ({ inputs: row.inputs, outputs: row.outputs, metadata: row.metadata })));
  expect(created.map((example) => example.inputs)).toEqual(rows.map((row) => row.inputs));
  expect(rows.some((row) => row.outputs.label === 'edited' && row.outputs.editedArgs !== undefined)).toBe(true);
  expect(JSON.stringify([...examples.values()])).not.toContain(cardOf(0));
});

it('evalite: each row is the published DataShape, { input, expected }, and nothing else', async () => {
  const store = new MemoryStore();
  await seedDecisions(store, COUNT);
  const rows = await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), format: 'evalite' }));
  // What an eval's `data` returns, typed by evalite's own declaration.
  const data: Array<DataShape<EvaliteDecisionRow['input'], EvaliteDecisionRow['expected']>> = rows;
  expect(data).toHaveLength(COUNT);
  for (const row of data) {
    expect(Object.keys(row).sort()).toEqual(['expected', 'input']);
    expect(typeof row.input.tool).toBe('string');
    expect(['approved', 'edited', 'declined', 'expired', 'cancelled', 'answered']).toContain(row.expected?.label);
  }
  // Parsed back from JSONL, as `data: async () => lines.map(JSON.parse)` reads a file, it is the same.
  expect(rows.map((row) => JSON.parse(JSON.stringify(row)) as unknown)).toEqual(rows);
});

it('Braintrust: each row is a dataset record, { id, input, expected, metadata, tags }', async () => {
  const store = new MemoryStore();
  await seedDecisions(store, COUNT);
  const rows = await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), format: 'braintrust' }));
  expect(rows).toHaveLength(COUNT);
  expect(new Set(rows.map((row) => row.id)).size).toBe(COUNT);
  for (const row of rows) {
    expect(Object.keys(row).sort()).toEqual(['expected', 'id', 'input', 'metadata', 'tags']);
    expect(row.tags).toEqual(expect.arrayContaining([row.expected.label, row.metadata.decision.source]));
  }
  expect(rows.filter((row) => row.tags.includes('shadow-agreed') || row.tags.includes('shadow-disagreed')).length).toBeGreaterThan(0);
});
