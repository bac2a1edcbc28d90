import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { InvalidArgumentError } from '../../errors';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { mcpEndpoint, type McpEndpointOptions } from './http-endpoint';
import { defaultAllowedHosts, HttpGuard } from './http-guard';
import { coordinatorOf } from './server';
import { serveStdioEras } from './stdio';
import type { McpServerOptions, McpToolHost } from './types';

/**
 * {@link serveMcp} over stdin/stdout: what Claude Desktop and VS Code start as a child process.
 * Both eras: each connection is served in the one its client opens with (docs/mcp.md, "Two eras").
 */
export interface McpStdioOptions extends McpServerOptions {
  transport: 'stdio';
  /** Streams to use instead of the process's own (tests). */
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/**
 * {@link serveMcp} over Streamable HTTP, on a server of its own: both eras from one endpoint,
 * one MCP session per 2025-11-25 client, stateless 2026-07-28 requests (docs/mcp.md, "Two eras").
 */
export interface McpHttpOptions extends McpEndpointOptions {
  transport: 'http';
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1`. */
  host?: string;
  /** The endpoint's path; default `/mcp`. */
  path?: string;
  /**
   * `Host` values accepted, exactly (`name:port`, or `name` alone for port 80 or behind a proxy
   * on 443), against DNS rebinding. Always checked. Default: `localhost`, `127.0.0.1`, `[::1]`
   * and the bound address (unless it is a wildcard like `0.0.0.0`), each with the bound port.
   * List here the names clients use to reach a server bound to `0.0.0.0` or a LAN address.
   */
  allowedHosts?: string[];
  /**
   * `Origin` values accepted when a browser sends one (`https://app.example.com`). Default: the
   * `http://` and `https://` origins of `allowedHosts`; a page of any other site is refused 403.
   */
  allowedOrigins?: string[];
}

/** A running MCP server. */
export interface McpServerHandle {
  /** The coordinator calls go through (and whose store keeps unanswered suspensions). */
  readonly coordinator: ResumeCoordinator;
  /** Stops serving: closes every session (and, over HTTP, the listening socket). */
  close(): Promise<void>;
}

/** A running Streamable HTTP MCP server. */
export interface McpHttpServerHandle extends McpServerHandle {
  /** The endpoint clients connect to, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** How many sessions are open. */
  sessionCount(): number;
  /** The bytes the sessions' event stores hold together (at most `maxEventBytes`). */
  eventBytes(): number;
}

const WILDCARD_V6 = new Set(['::', '[::]', '::0']);

/**
 * Serves a Toolkit (or a ResumeCoordinator with its store) to MCP clients: `tools/list` from
 * the tools' schemas, `tools/call` through the coordinator, suspensions asked through the
 * client's elicitation (2025-11-25) or answered `input_required` (2026-07-28), over stdio and
 * HTTP alike (docs/mcp.md).
 *
 * @example
 * ```ts
 * await serveMcp(toolkit, { transport: 'stdio' })                  // for Claude Desktop, VS Code
 * const http = await serveMcp(toolkit, { transport: 'http', port: 3000 })
 * ```
 */
export function serveMcp(host: McpToolHost, options: McpStdioOptions): Promise<McpServerHandle>;
export function serveMcp(host: McpToolHost, options: McpHttpOptions): Promise<McpHttpServerHandle>;
export async function serveMcp(host: McpToolHost, options: McpStdioOptions | McpHttpOptions): Promise<McpServerHandle> {
  const coordinator = coordinatorOf(host);
  if (options?.transport === 'stdio') {
    const { transport: _transport, stdin, stdout, ...serverOptions } = options;
    const streams = { ...(stdin ? { stdin: stdin as Readable } : {}), ...(stdout ? { stdout: stdout as Writable } : {}) };
    const served = serveStdioEras(coordinator, serverOptions, streams);
    return { coordinator, close: () => served.close() };
  }
  if (options?.transport === 'http') return serveHttp(coordinator, options);
  throw new InvalidArgumentError(`serveMcp needs { transport: 'stdio' } or { transport: 'http' }`);
}

async function serveHttp(coordinator: ResumeCoordinator, options: McpHttpOptions): Promise<McpHttpServerHandle> {
  const { transport: _transport, port: wanted, host, path = '/mcp', allowedHosts, allowedOrigins, ...endpointOptions } = options;
  let guard: HttpGuard | undefined;
  // The guard needs the bound port, known once listening; no request is served before that.
  const endpoint = mcpEndpoint(coordinator, endpointOptions, () => guard as HttpGuard, path);
  const http = createServer((req, res) => void endpoint.handle(req, res));
  const close = async (): Promise<void> => {
    await endpoint.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  const bindHost = host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(wanted ?? 0, bindHost, () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await endpoint.close();
    throw error;
  }
  const port = (http.address() as AddressInfo).port;
  try {
    guard = new HttpGuard(allowedHosts ?? defaultAllowedHosts(bindHost, port), allowedOrigins);
  } catch (error) {
    await close();
    throw error;
  }
  // A wildcard bind is reached on loopback here; its other names are the operator's to list.
  const reachable = bindHost === '' || bindHost === '0.0.0.0' ? '127.0.0.1' : WILDCARD_V6.has(bindHost) ? '::1' : bindHost;
  const shownHost = reachable.includes(':') ? `[${reachable}]` : reachable;
  return {
    coordinator,
    url: `http://${shownHost}:${port}${path}`,
    sessionCount: () => endpoint.sessionCount(),
    eventBytes: () => endpoint.eventBytes(),
    close,
  };
}
