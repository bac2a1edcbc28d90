// Lets @modelcontextprotocol/conformance 0.1.16 start on Node 20. Its bundle imports
// `globSync` from 'fs' (added in Node 22) at the top, although only its `tier-check`
// command calls it; on Node 20 that import alone stops the CLI before any scenario runs.
// Loaded with `node --import`, this resolves the bundle's 'fs' to a module that is Node's
// own fs plus a `globSync` that says it needs Node 22. Nothing else is changed, and on a
// Node that has fs.globSync it does nothing.
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const SHIM =
  'data:text/javascript,' +
  encodeURIComponent(
    "import fs from 'node:fs'; export * from 'node:fs'; export default fs; " +
      "export function globSync() { throw new Error('fs.globSync needs Node 22 (the conformance tier-check command)'); }",
  );

/** Module-resolution hook: the conformance bundle's 'fs' becomes the shim. */
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}

if (isMainThread && typeof fs.globSync !== 'function') register(import.meta.url);
