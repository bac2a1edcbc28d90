import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as rootEntry from 'toolnexus-ts';
import { ToolnexusError } from 'toolnexus-ts';
import * as suspensionEntry from 'toolnexus-ts/suspension';
import { StoreError, StoreUnavailableError, UnknownSuspensionError } from 'toolnexus-ts/suspension';
import * as modelsEntry from 'toolnexus-ts/models';
import { ModelConnectionError, ModelError } from 'toolnexus-ts/models';
import * as agentsEntry from 'toolnexus-ts/agents';

/** The classes of src/errors, each exported by the entry of the layer that throws it. */
const errors = { ...rootEntry, ...suspensionEntry, ...modelsEntry, ...agentsEntry };

/**
 * The released codes. A code is a promise to programs that match on it: this list only
 * ever grows, and an entry never changes.
 */
const CODES: Record<string, string> = {
  ToolnexusError: 'TOOLNEXUS_ERROR',
  ToolRegistrationError: 'TOOLNEXUS_TOOL_REGISTRATION',
  UnknownSuspensionError: 'TOOLNEXUS_UNKNOWN_SUSPENSION',
  AlreadyResolvedError: 'TOOLNEXUS_ALREADY_RESOLVED',
  InvalidArgumentError: 'TOOLNEXUS_INVALID_ARGUMENT',
  InvalidAnswerError: 'TOOLNEXUS_INVALID_ANSWER',
  DuplicateSuspensionError: 'TOOLNEXUS_DUPLICATE_SUSPENSION',
  UnregisteredToolError: 'TOOLNEXUS_UNREGISTERED_TOOL',
  StoreError: 'TOOLNEXUS_STORE',
  ModelError: 'TOOLNEXUS_MODEL',
  ModelHttpError: 'TOOLNEXUS_MODEL_HTTP',
  ModelTimeoutError: 'TOOLNEXUS_MODEL_TIMEOUT',
  ModelConnectionError: 'TOOLNEXUS_MODEL_CONNECTION',
  ModelResponseError: 'TOOLNEXUS_MODEL_RESPONSE',
  RunNotFoundError: 'TOOLNEXUS_RUN_NOT_FOUND',
  RunConflictError: 'TOOLNEXUS_RUN_CONFLICT',
  RunCancelledError: 'TOOLNEXUS_RUN_CANCELLED',
  RunCheckpointError: 'TOOLNEXUS_RUN_CHECKPOINT',
  InvalidResumeError: 'TOOLNEXUS_INVALID_RESUME',
  StoreUnavailableError: 'TOOLNEXUS_STORE_UNAVAILABLE',
  ClaimLostError: 'TOOLNEXUS_CLAIM_LOST',
  ClaimHeldError: 'TOOLNEXUS_CLAIM_HELD',
  SuspensionMismatchError: 'TOOLNEXUS_SUSPENSION_MISMATCH',
  ModelResponseTooLargeError: 'TOOLNEXUS_MODEL_RESPONSE_TOO_LARGE',
  ModelRedirectError: 'TOOLNEXUS_MODEL_REDIRECT',
  ModelRequestError: 'TOOLNEXUS_MODEL_REQUEST',
  OutputValidationError: 'TOOLNEXUS_OUTPUT_INVALID',
  DtoRuleError: 'TOOLNEXUS_DTO_RULE',
  StandardSchemaError: 'TOOLNEXUS_STANDARD_SCHEMA',
  SessionBusyError: 'TOOLNEXUS_SESSION_BUSY',
  SessionFullError: 'TOOLNEXUS_SESSION_FULL',
  AnswerRefusedError: 'TOOLNEXUS_ANSWER_REFUSED',
  MissingPeerError: 'TOOLNEXUS_MISSING_PEER',
  KeyLostError: 'TOOLNEXUS_KEY_LOST',
};

type AnyErrorClass = new (...args: never[]) => ToolnexusError;

/** Builds any of the classes; the arguments only need to be of the right kinds. */
function instanceOf(cls: AnyErrorClass): ToolnexusError {
  const args: unknown[] = cls.prototype instanceof ModelError ? ['openai', 'detail', 1, 1] : ['a', 'b'];
  return new (cls as unknown as new (...a: unknown[]) => ToolnexusError)(...args);
}

describe('error codes', () => {
  const classes = Object.entries(errors as Record<string, unknown>).filter(
    ([, value]) =>
      typeof value === 'function' && (value === ToolnexusError || (value as AnyErrorClass).prototype instanceof ToolnexusError),
  );

  it('every exported error class has a released code, each its own', () => {
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(CODES).sort());
    expect(new Set(Object.values(CODES)).size).toBe(Object.keys(CODES).length);
  });

  it.each(Object.entries(CODES))('%s has code %s, an own property, and keeps its class name as name', (name, code) => {
    const error = instanceOf((errors as unknown as Record<string, AnyErrorClass>)[name] as AnyErrorClass);
    expect(error.code).toBe(code);
    expect(Object.prototype.hasOwnProperty.call(error, 'code')).toBe(true);
    expect(error.name).toBe(name);
  });

  it('a subclass without a code of its own keeps its parent’s, whatever the subclass is called', () => {
    class Renamed extends UnknownSuspensionError {}
    const error = new Renamed('pnd-1');
    expect(error.name).toBe('Renamed');
    expect(error.code).toBe('TOOLNEXUS_UNKNOWN_SUSPENSION');
  });
});

describe('error causes', () => {
  it('are the standard ES2022 cause, set only when given', () => {
    const root = new Error('socket hang up');
    const withCause = new StoreError('read failed', { cause: root });
    expect(withCause.cause).toBe(root);
    expect(Object.getOwnPropertyDescriptor(withCause, 'cause')).toMatchObject({ enumerable: false });
    expect('cause' in new StoreError('read failed')).toBe(false);
    // An explicit undefined cause is still a cause, as with Error itself.
    expect('cause' in new StoreError('read failed', { cause: undefined })).toBe(true);
  });

  it('pass through every constructor that takes options', () => {
    const root = new Error('ECONNREFUSED');
    expect(new StoreUnavailableError('down', { cause: root }).cause).toBe(root);
    expect(new ModelError('openai', 'failed', { cause: root }).cause).toBe(root);
    expect(new ModelConnectionError('openai', 'ECONNREFUSED', 2, { cause: root }).cause).toBe(root);
    expect(new ToolnexusError('failed', { cause: root }).cause).toBe(root);
  });
});

describe('error codes of the toolnexus-ts/mcp entry', () => {
  it('are released and stable', async () => {
    const mcp = await import('toolnexus-ts/mcp');
    expect(new mcp.McpConfigError('x').code).toBe('TOOLNEXUS_MCP_CONFIG');
    expect(new mcp.McpConnectionError('x').code).toBe('TOOLNEXUS_MCP_CONNECTION');
    expect(new mcp.McpOAuthOriginError('s', 'http://a', 'to reach').code).toBe('TOOLNEXUS_MCP_OAUTH_ORIGIN');
    expect(new mcp.McpOAuthIssuerError('s', 'http://a', 'http://b').code).toBe('TOOLNEXUS_MCP_OAUTH_ISSUER');
    expect(new mcp.McpConfigError('x')).toBeInstanceOf(ToolnexusError);
  });
});

describe('error codes of the toolnexus-ts/a2a entry', () => {
  it('are released and stable', () => {
    // The entry loads @a2a-js/sdk, whose CommonJS build requires an ES module jest cannot: read in a child.
    const root = join(__dirname, '..', '..');
    const script = `const { A2ARequestError } = require(${JSON.stringify(join(root, 'src', 'a2a', 'index.ts'))});
      const { ToolnexusError } = require(${JSON.stringify(join(root, 'src', 'index.ts'))});
      const { A2AAgentError } = require(${JSON.stringify(join(root, 'src', 'a2a', 'index.ts'))});
      const error = new A2ARequestError('not_pending', 'x');
      const agent = new A2AAgentError('x');
      process.stdout.write(JSON.stringify({ code: error.code, reason: error.reason, name: error.name, base: error instanceof ToolnexusError,
        agent: { code: agent.code, name: agent.name, base: agent instanceof ToolnexusError } }));`;
    const out = execFileSync(process.execPath, ['-r', join(root, 'test', 'fixtures', 'register-ts.js'), '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      code: 'TOOLNEXUS_A2A_REQUEST',
      reason: 'not_pending',
      name: 'A2ARequestError',
      base: true,
      agent: { code: 'TOOLNEXUS_A2A_AGENT', name: 'A2AAgentError', base: true },
    });
  });
});
