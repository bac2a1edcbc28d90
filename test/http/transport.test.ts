/**
 * The built-in node:http(s) transport of the HTTP models, over real sockets on 127.0.0.1:
 * the keep-alive pool, a pooled socket the server had closed, what a timeout does to the
 * connection, a process that must still end by itself, and HTTPS with Node's own trust
 * store. (Retries, caps and hostile servers run over both transports in retries.test.ts
 * and hostile-http.test.ts.)
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import { ModelTimeoutError, OpenAIChatModel, type OpenAIChatModelOptions } from 'toolnexus-ts/models';
import { startChild } from '../fixtures/children';

const TLS = join(__dirname, '..', 'fixtures', 'tls');
const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
const answer = (text: string): string =>
  JSON.stringify({ choices: [{ message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: {} });

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

interface Host {
  url: string;
  connections: number;
  bodies: string[];
  headers: IncomingMessage['headers'][];
  closedSockets: number;
}

async function listen(server: Server, scheme = 'http'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An OpenAI-dialect server answering `reply` (or nothing, when it returns false), counting connections. */
async function host(reply: (res: ServerResponse, body: string) => boolean | void = (res) => void res.end(answer('ok'))): Promise<Host> {
  const state = { connections: 0, bodies: [] as string[], headers: [] as IncomingMessage['headers'][], closedSockets: 0 };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.bodies.push(body);
      state.headers.push(req.headers);
      res.setHeader('content-type', 'application/json');
      reply(res, body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    state.connections++;
    socket.on('close', () => state.closedSockets++);
  });
  const url = await listen(server);
  return Object.assign(state, { url });
}

function model(url: string, options: Partial<OpenAIChatModelOptions> = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: url, model: 'm', apiKey: 'sk-test', retry: { maxAttempts: 1 }, ...options });
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not true within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the built-in node:http(s) transport', () => {
  it('keeps one connection alive across sequential calls', async () => {
    const server = await host();
    const m = model(server.url);
    for (let i = 0; i < 5; i++) expect((await m.complete(request)).text).toBe('ok');
    expect(server.bodies).toHaveLength(5);
    expect(server.connections).toBe(1);
  });

  it('sends a body with non-ASCII text whole: its length is counted in bytes', async () => {
    const server = await host();
    const content = 'héllo — 日本語 🌍 '.repeat(50);
    await model(server.url).complete({ messages: [{ role: 'user', content }], tools: [] });
    const sent = JSON.parse(server.bodies[0] as string) as { messages: Array<{ content: string }> };
    expect(sent.messages[0]?.content).toBe(content);
  });

  it('sends a user agent unless the headers carry one, and asks for no content coding', async () => {
    const server = await host();
    await model(server.url).complete(request);
    await model(server.url, { headers: { 'User-Agent': 'my-gateway-client/2' } }).complete(request);
    expect(server.headers[0]?.['user-agent']).toBe('toolnexus-ts');
    expect(server.headers[1]?.['user-agent']).toBe('my-gateway-client/2');
    expect(server.headers[0]?.['accept-encoding']).toBeUndefined();
    expect(server.headers[0]?.authorization).toBe('Bearer sk-test');
  });

  it('sends again, once, on a fresh socket when the server had dropped the pooled one (not an attempt of its own)', async () => {
    // A raw server: the first connection answers its first request, then drops the socket on
    // the next one without answering, as a server whose idle timeout just passed does.
    let connections = 0;
    const answered: number[] = [];
    const sockets: Socket[] = [];
    const server = createNetServer((socket) => {
      sockets.push(socket);
      const connection = connections++;
      let buffer = Buffer.alloc(0);
      let requests = 0;
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (;;) {
          const headEnd = buffer.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const length = Number(/content-length: *(\d+)/i.exec(buffer.subarray(0, headEnd).toString())?.[1] ?? 0);
          if (buffer.length < headEnd + 4 + length) return;
          buffer = buffer.subarray(headEnd + 4 + length);
          if (connection === 0 && requests++ > 0) return void socket.destroy();
          answered.push(connection);
          const body = answer(`from connection ${connection}`);
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`,
          );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    );
    const m = model(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect((await m.complete(request)).text).toBe('from connection 0');
    expect((await m.complete(request)).text).toBe('from connection 1');
    expect(answered).toEqual([0, 1]);
    expect(connections).toBe(2);
  });

  it('a timed-out attempt closes its connection: the server sees the request go', async () => {
    const server = await host(() => false); // never answers
    const error = await model(server.url, { timeoutMs: 150 })
      .complete(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelTimeoutError);
    await until(() => server.closedSockets === 1);
  });

  it("the caller's abort closes the connection too", async () => {
    const server = await host(() => false);
    const controller = new AbortController();
    const call = model(server.url).complete({ ...request, signal: controller.signal });
    await until(() => server.bodies.length === 1);
    controller.abort(new Error('user cancelled'));
    await expect(call).rejects.toThrow('user cancelled');
    await until(() => server.closedSockets === 1);
  });

  it('refuses credentials in the base URL at construction, without quoting them', () => {
    expect(() => model('http://user:sk-secret-in-url@127.0.0.1:9/v1')).toThrow(InvalidArgumentError);
    expect(() => model('http://user:sk-secret-in-url@127.0.0.1:9/v1')).toThrow(/credentials/);
    expect(() => model('http://user:sk-secret-in-url@127.0.0.1:9/v1')).not.toThrow(/sk-secret/);
  });

  it('a process whose pool holds an idle keep-alive socket still ends by itself', async () => {
    const server = await host();
    const started = Date.now();
    const exit = await startChild('model-call-child.ts', [server.url]).exited;
    expect(exit.stderr).toBe('');
    expect(exit.stdout).toBe('answer: ok\n');
    expect(exit.code).toBe(0);
    // The server would hold the socket open for 60 s; the child must not wait for it.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(server.connections).toBe(1);
  }, 30_000);

  it('speaks HTTPS with TLS verification on, trusting what Node trusts (NODE_EXTRA_CA_CERTS)', async () => {
    const server = createHttpsServer(
      { key: readFileSync(join(TLS, 'localhost.key')), cert: readFileSync(join(TLS, 'localhost.crt')) },
      (req, res) => {
        req.resume();
        req.on('end', () => {
          res.setHeader('content-type', 'application/json');
          res.end(answer('over tls'));
        });
      },
    );
    const url = await listen(server, 'https');
    const trusted = await startChild('model-call-child.ts', [url], { NODE_EXTRA_CA_CERTS: join(TLS, 'localhost.crt') }).exited;
    expect(trusted.stderr).toBe('');
    expect(trusted.stdout).toBe('answer: over tls\n');
    // The same server without the certificate trusted: refused, as a connection failure that names why.
    const untrusted = await startChild('model-call-child.ts', [url]).exited;
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/^failed: ModelConnectionError: .*(SELF_SIGNED|self-signed|self signed)/);
    expect(untrusted.stderr).not.toContain('sk-test-child');
  }, 30_000);
});
