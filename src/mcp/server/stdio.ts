import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { McpCatalog } from './catalog/catalog';
import { forwardChanges, modernServer, modernServing } from './modern';
import { mrtrSettingsOf } from './mrtr';
import { createMcpServer } from './server';
import type { McpServerOptions } from './types';

/** The streams serveMcp speaks over stdio on: the process's own unless given (tests). */
export interface StdioStreams {
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * serveMcp over stdio, both eras (docs/mcp.md, "Two eras"). The SDK's stdio entry reads the
 * era of the connection from its opening, as the 2026-07-28 stdio binding has it: an
 * `initialize` handshake (or any message without the per-request `_meta` envelope) opens a
 * 2025-11-25 session; a request carrying the envelope opens a 2026-07-28 connection; a
 * `server/discover` probe is answered without deciding, so its client may still fall back to
 * `initialize`. One server of that era then serves the whole connection: the 2025-11-25 one
 * HTTP sessions get (elicitation, sampling, logging), or the 2026-07-28 one the HTTP endpoint
 * builds per request (each request's `_meta` read on its own, MRTR round trips, tasks).
 */
export function serveStdioEras(
  coordinator: ResumeCoordinator,
  options: McpServerOptions,
  streams: StdioStreams = {},
): { close(): Promise<void> } {
  // Built now, so bad options are refused by serveMcp itself, not by the first message.
  const serving = modernServing(coordinator, options, mrtrSettingsOf(options), 'pipe');
  return serveStdio(
    ({ era }) =>
      era === 'legacy'
        ? createMcpServer(coordinator, options)
        : publishing(modernServer(coordinator, options, serving, undefined), coordinator, options.catalog),
    { transport: new StdioServerTransport(streams.stdin, streams.stdout) },
  );
}

/**
 * A connection's 2026-07-28 server told of the toolkit's and the catalog's changes, as a
 * 2025-11-25 session is: the SDK's stdio entry sends each one only on the connection's
 * `subscriptions/listen` streams that asked for it. Until the server closes (a discarded
 * `server/discover` probe closes too).
 */
function publishing(server: Server, coordinator: ResumeCoordinator, catalog: McpCatalog | undefined): Server {
  // Not connected yet, or closed: there is nobody to tell.
  const tell = (sent: Promise<void>): void => void sent.catch(() => undefined);
  const stops = forwardChanges(coordinator, catalog, {
    toolsChanged: () => tell(server.sendToolListChanged()),
    resourceUpdated: (uri) => tell(server.sendResourceUpdated({ uri })),
    resourcesChanged: () => tell(server.sendResourceListChanged()),
    promptsChanged: () => tell(server.sendPromptListChanged()),
  });
  const previous = server.onclose;
  server.onclose = () => {
    for (const stop of stops) stop();
    previous?.();
  };
  return server;
}
