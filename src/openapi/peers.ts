import { loadPeer } from '../errors/peer';

type ParserModule = typeof import('@readme/openapi-parser');
type AjvClass = typeof import('ajv').default;
type YamlModule = { parse(text: string, options?: { maxAliasCount?: number }): unknown };

const ENTRY = 'toolnexus-ts/openapi';

/* eslint-disable @typescript-eslint/no-require-imports -- optional peers, required by this entry only, when it is used */
export const openApiParser = (): ParserModule =>
  loadPeer<ParserModule>(
    () => require('@readme/openapi-parser'),
    ENTRY,
    '@readme/openapi-parser',
    'npm install @readme/openapi-parser ajv yaml',
  );
export const ajvFor = (version: '3.0' | '3.1'): AjvClass =>
  version === '3.1'
    ? loadPeer<{ default: AjvClass }>(() => require('ajv/dist/2020'), ENTRY, 'ajv', 'npm install ajv').default
    : loadPeer<{ default: AjvClass }>(() => require('ajv'), ENTRY, 'ajv', 'npm install ajv').default;
export const yamlParser = (): YamlModule => loadPeer<YamlModule>(() => require('yaml'), ENTRY, 'yaml', 'npm install yaml');
/* eslint-enable @typescript-eslint/no-require-imports -- the optional peers end here */
