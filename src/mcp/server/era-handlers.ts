import type { Server, ServerContext, StandardSchemaV1 } from '@modelcontextprotocol/server';
import { cardContents, cardResourceListing, APPROVAL_CARD_URI } from './approval-card';
import type { McpCatalog } from './catalog/catalog';
import type { CatalogContext } from './catalog/types';
import { McpCatalogError } from './errors';
import { SKILLS_EXTENSION, type SkillShelf } from './skills';
import type { McpServerOptions } from './types';

/**
 * What a server of either protocol era (2025-11-25, 2026-07-28) serves besides its tools: the
 * host's catalog, the skills' files and methods, the approval card. The eras answer these alike;
 * they differ in the errors a refusal becomes ({@link Refusing}) and in what they add around them.
 */
export interface Served {
  readonly catalog: McpCatalog | undefined;
  readonly shelf: SkillShelf | undefined;
  readonly card: boolean;
}

/**
 * An era's way of answering a refusal (an `McpCatalogError`, say) with its protocol error: `read`
 * is the resource read the work answers, whose "no such resource" names it as the era does.
 */
export type Refusing = <T>(work: () => Promise<T>, read?: { uri: string; ctx: ServerContext }) => Promise<T>;

/** The server's name and version, and the capabilities it declares for what it serves (`extensions`: the era's own). */
export function serverSetup(
  options: McpServerOptions,
  served: Served,
  extensions: Record<string, object>,
): ConstructorParameters<typeof Server> {
  const { catalog, shelf, card } = served;
  const declared = { ...extensions, ...(shelf ? { [SKILLS_EXTENSION]: {} } : {}) };
  return [
    { name: options.name ?? 'toolnexus', version: options.version ?? '0.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        // Deprecated at 2026-07-28 but still carried: a request that names a level in its `_meta`
        // gets its own log lines, and the SDK sends none unless this capability is declared.
        logging: {},
        ...(Object.keys(declared).length > 0 ? { extensions: declared } : {}),
        // The skills' files are served through resources/read, so they come with the resources capability.
        ...(catalog
          ? { resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {} }
          : shelf || card
            ? { resources: {} }
            : {}),
      },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  ];
}

/** A custom method's params (skills/*, tasks/*), read field by field where they are used (a Standard Schema that checks only the shape). */
export const PARAMS: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'toolnexus',
    validate: (value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { value: value as Record<string, unknown> }
        : { issues: [{ message: 'params must be an object' }] },
  },
};

/**
 * `resources/list` and `resources/read` over the skills' files, the catalog's resources and the
 * approval card (each read by its own URI; with a catalog, a `skill://` URI is the skills'), and
 * the catalog's templates, prompt list and completions. `contextOf`: what a catalog read is given.
 */
export function serveResources(
  server: Server,
  served: Served,
  refusing: Refusing,
  contextOf: (ctx: ServerContext) => CatalogContext,
): void {
  const { catalog, shelf, card } = served;
  server.setRequestHandler('resources/list', async () => ({
    resources: [
      ...(shelf ? await shelf.resources() : []),
      ...(catalog ? catalog.resources() : []),
      ...(card ? [cardResourceListing()] : []),
    ],
  }));
  server.setRequestHandler('resources/read', (request, ctx) => {
    const uri = request.params.uri;
    return refusing(
      async () => {
        if (card && uri === APPROVAL_CARD_URI) return { contents: cardContents() };
        if (shelf && (!catalog || shelf.owns(uri))) return { contents: (await shelf.read(uri)) as never };
        if (!catalog) throw new McpCatalogError(`no resource ${uri}`, 'not-found');
        return { contents: (await catalog.read(uri, contextOf(ctx))) as never };
      },
      { uri, ctx },
    );
  });
  if (!catalog) return;
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: catalog.templates() }));
  server.setRequestHandler('prompts/list', () => ({ prompts: catalog.prompts() }));
  server.setRequestHandler('completion/complete', (request) =>
    refusing(async () => {
      const ref = request.params.ref;
      const target =
        ref.type === 'ref/prompt' ? { type: 'prompt' as const, name: ref.name } : { type: 'template' as const, uriTemplate: ref.uri };
      const context = request.params.context?.arguments ? { arguments: request.params.context.arguments } : {};
      return { completion: { ...(await catalog.complete(target, request.params.argument, context)) } };
    }),
  );
}

/**
 * The Skills extension's `skills/list` and `skills/get` (docs/mcp.md, "Skills over MCP"); `fields`
 * is what the era adds to each answer (2026-07-28: its cache fields).
 */
export function serveSkillMethods(server: Server, shelf: SkillShelf, refusing: Refusing, fields: object): void {
  server.setRequestHandler('skills/list', { params: PARAMS }, (params) =>
    refusing(async () => {
      const cursor = params.cursor;
      if (cursor !== undefined && typeof cursor !== 'string') throw new McpCatalogError('skills/list: cursor must be a string', 'invalid');
      return { ...(await shelf.list(cursor)), ...fields } as never;
    }),
  );
  server.setRequestHandler('skills/get', { params: PARAMS }, (params) =>
    refusing(async () => ({ skill: await shelf.get(params.uri), ...fields }) as never),
  );
}
