/**
 * class-transformer's metadata storage (`@Type`, `@Transform`, `@Expose`, `@Exclude`), read by
 * the schema generator, redaction and the Toolkit's arguments plan. One place for the one
 * require of a path the package does not export with types: its typings live under types/.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the cjs path has no .d.ts beside it, so an import would be untyped
export const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');
