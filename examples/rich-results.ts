/**
 * A tool that returns a picture: `withContent` gives the model a PNG beside the text, and the
 * runner sends it in the provider's own image format (here Anthropic's `tool_result` image
 * block). Results are stored with at most `maxInlineBytes` of media inline: past it, the bytes go
 * to a FileContentStore by reference and are loaded back before each model call. It runs
 * offline: a small server on 127.0.0.1 answers the way the messages API does and says whether
 * the picture reached it. Drop `baseUrl` and give your `apiKey`, and the same code talks to Claude.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { Toolkit, defineTool, withContent } from 'toolnexus-ts';
import { FileContentStore, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { AnthropicModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

export async function main(): Promise<void> {
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const media = mkdtempSync(join(tmpdir(), 'toolnexus-media-'));
  try {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'sales_chart',
        description: 'Draws the sales chart of the week',
        inputSchema: { type: 'object' },
        run: () => withContent('The sales chart of week 48', [{ type: 'image', data: chartPng(), mimeType: 'image/png' }]),
      }),
    );
    // A bound this small keeps even a tiny chart by reference, to show the content store at work.
    const coordinator = new ResumeCoordinator({
      toolkit,
      content: { maxInlineBytes: 16, store: new FileContentStore({ directory: media }) },
    });
    const model = new AnthropicModel({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'sk-ant-local-example',
      model: 'claude-sonnet-4-5',
    });
    const result = await new AgentRunner({ model, toolkit, coordinator }).run('How did sales go this week?');
    console.log(`${result.status}: ${result.text}`);
    const kept = result.messages.find((message) => message.role === 'tool');
    console.log(`kept in the transcript: ${JSON.stringify(kept?.role === 'tool' ? kept.media : undefined)}`);
    console.log(`in the content store: ${readdirSync(media).join(', ')}`);
    if (!result.text.startsWith('I can see')) throw new Error('the chart did not reach the model');
  } finally {
    rmSync(media, { recursive: true, force: true });
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A 4×2 PNG of red bars, made byte by byte (signature, IHDR, IDAT, IEND with their CRCs). */
function chartPng(): Buffer {
  const crc = (bytes: Buffer): number => {
    let c = 0xffffffff;
    for (const byte of bytes) {
      c ^= byte;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.from([0, 0, 0, 4, 0, 0, 0, 2, 8, 2, 0, 0, 0]); // 4×2, 8-bit RGB
  const row = Buffer.from([0, 255, 0, 0, 255, 255, 255, 255, 0, 0, 255, 255, 255]); // filter 0, red, white, red, white
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat([row, row]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- The stand-in for the messages API ---------------------------------------------------------

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  const body = JSON.parse(raw) as { messages: Array<{ role: string; content: unknown }> };
  const last = body.messages.at(-1)?.content;
  const result = Array.isArray(last)
    ? (last as Array<{ type: string; content?: unknown }>).find((b) => b.type === 'tool_result')
    : undefined;
  let content: unknown[];
  if (!result) {
    content = [{ type: 'tool_use', id: 'toolu_chart', name: 'sales_chart', input: {} }];
  } else {
    const blocks = Array.isArray(result.content) ? (result.content as Array<{ type: string; source?: { media_type?: string } }>) : [];
    const image = blocks.find((b) => b.type === 'image' && b.source?.media_type === 'image/png');
    content = [
      { type: 'text', text: image ? 'I can see the chart: sales rose on Monday and Wednesday.' : 'No picture came with the result.' },
    ];
  }
  const stop_reason = result ? 'end_turn' : 'tool_use';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content,
      stop_reason,
      usage: { input_tokens: 40, output_tokens: 12 },
    }),
  );
}

if (require.main === module) void main();
