/**
 * The tools the conformance suite's `input-required-result-*` scenarios (MCP 2026-07-28, MRTR)
 * call, as `@Tool` classes of examples/mcp/conformance-server.ts. Each asks in an input round
 * (`inputRound`): nothing is stored, the tool runs again with `ctx.mcp.inputResponses` (and the
 * state it gave, sealed by serveMcp). A suspension (`pending`, a declared approval) travels the
 * same round trip durably: `test_elicitation` of the server is one.
 */
import 'reflect-metadata';
import { Tool } from 'toolnexus-ts';
import { inputRound, type McpInputRequest, type McpToolContext } from 'toolnexus-ts/mcp';

type Answers = Record<string, unknown> | undefined;

function form(message: string, field: string, type = 'string'): McpInputRequest {
  return {
    method: 'elicitation/create',
    params: { message, requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] } },
  };
}

/** A sampling request (sampling is deprecated as of 2026-07-28, SEP-2577; the suite still tests it). */
function sample(text: string, maxTokens: number): McpInputRequest {
  return { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens } };
}

const ROOTS: McpInputRequest = { method: 'roots/list', params: {} };

/** The accepted content of a form answer's `field`, or `undefined`. */
function field(answers: Answers, key: string, name: string): string | number | boolean | undefined {
  const answer = answers?.[key] as { action?: unknown; content?: Record<string, unknown> } | undefined;
  const value = answer?.action === 'accept' ? answer.content?.[name] : undefined;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

function sampledText(answers: Answers, key: string): string | undefined {
  const text = (answers?.[key] as { content?: { text?: unknown } } | undefined)?.content?.text;
  return typeof text === 'string' ? text : undefined;
}

function rootCount(answers: Answers, key: string): number | undefined {
  const roots = (answers?.[key] as { roots?: unknown } | undefined)?.roots;
  return Array.isArray(roots) ? roots.length : undefined;
}

@Tool({ name: 'test_input_required_result_elicitation', description: 'Asks for a name in an input round' })
export class InputElicitationTool {
  run(_args: object, ctx?: McpToolContext) {
    const name = field(ctx?.mcp.inputResponses, 'user_name', 'name');
    if (name !== undefined) return `Hello, ${String(name)}!`;
    return inputRound({ inputRequests: { user_name: form('What is your name?', 'name') } });
  }
}

@Tool({ name: 'test_input_required_result_sampling', description: "Asks the client's model in an input round" })
export class InputSamplingTool {
  run(_args: object, ctx?: McpToolContext) {
    const text = sampledText(ctx?.mcp.inputResponses, 'sample_request');
    if (text !== undefined) return `Sampling result: ${text}`;
    return inputRound({ inputRequests: { sample_request: sample('What is the capital of France?', 100) } });
  }
}

@Tool({ name: 'test_input_required_result_list_roots', description: "Asks for the client's roots in an input round" })
export class InputRootsTool {
  run(_args: object, ctx?: McpToolContext) {
    const count = rootCount(ctx?.mcp.inputResponses, 'roots_request');
    if (count !== undefined) return `Found ${count} root(s)`;
    return inputRound({ inputRequests: { roots_request: ROOTS } });
  }
}

@Tool({ name: 'test_input_required_result_request_state', description: 'Round-trips its own state' })
export class InputRequestStateTool {
  run(_args: object, ctx?: McpToolContext) {
    if (ctx?.mcp.requestState === 'request-state' && field(ctx.mcp.inputResponses, 'confirm', 'ok') === true)
      return 'state-ok: requestState validated';
    return inputRound({ inputRequests: { confirm: form('Please confirm', 'ok', 'boolean') }, requestState: 'request-state' });
  }
}

@Tool({ name: 'test_input_required_result_tampered_state', description: 'Refuses a changed state' })
export class InputTamperedStateTool {
  run(_args: object, ctx?: McpToolContext) {
    // A changed state never reaches the tool: serveMcp refuses it with -32602 first.
    if (ctx?.mcp.requestState === 'tamper-test' && ctx.mcp.inputResponses?.confirm !== undefined) return 'integrity-ok: state verified';
    return inputRound({ inputRequests: { confirm: form('Please confirm', 'ok', 'boolean') }, requestState: 'tamper-test' });
  }
}

@Tool({ name: 'test_input_required_result_multiple_inputs', description: 'Asks three things in one round' })
export class InputMultipleTool {
  run(_args: object, ctx?: McpToolContext) {
    const answers = ctx?.mcp.inputResponses;
    const name = field(answers, 'user_name', 'name');
    const roots = rootCount(answers, 'client_roots');
    if (ctx?.mcp.requestState === 'multiple-inputs' && name !== undefined && answers?.greeting !== undefined && roots !== undefined)
      return `Name: ${String(name)}; Greeting: ${sampledText(answers, 'greeting') ?? 'Hello there!'}; Roots: ${roots}`;
    return inputRound({
      inputRequests: { user_name: form('What is your name?', 'name'), greeting: sample('Generate a greeting', 50), client_roots: ROOTS },
      requestState: 'multiple-inputs',
    });
  }
}

@Tool({ name: 'test_input_required_result_multi_round', description: 'Asks in two rounds, carrying the first answer in its state' })
export class InputMultiRoundTool {
  run(_args: object, ctx?: McpToolContext) {
    const state = ctx?.mcp.requestState;
    const answers = ctx?.mcp.inputResponses;
    const name = field(answers, 'step1', 'name');
    if (state === 'round-1' && name !== undefined)
      return inputRound({
        inputRequests: { step2: form('Step 2: What is your favorite color?', 'color') },
        requestState: `round-2:${String(name)}`,
      });
    const color = field(answers, 'step2', 'color');
    if (state?.startsWith('round-2:') && color !== undefined)
      return `Multi-round complete for ${state.slice('round-2:'.length)} who likes ${String(color)}`;
    return inputRound({ inputRequests: { step1: form('Step 1: What is your name?', 'name') }, requestState: 'round-1' });
  }
}

@Tool({ name: 'test_input_required_result_capabilities', description: 'Asks only what the client declared it can answer' })
export class InputCapabilitiesTool {
  run(_args: object, ctx?: McpToolContext) {
    const answers = ctx?.mcp.inputResponses;
    if (answers && Object.keys(answers).length > 0) return `capabilities-ok: received ${Object.keys(answers).join(',')}`;
    const caps = ctx?.mcp.clientCapabilities ?? {};
    const inputRequests: Record<string, McpInputRequest> = {};
    if (caps.elicitation) inputRequests.elicit_input = form('Elicitation input', 'value');
    if (caps.sampling) inputRequests.sample_input = sample('Sample request', 50);
    if (Object.keys(inputRequests).length === 0) return 'capabilities-ok: nothing the client can answer';
    return inputRound({ inputRequests });
  }
}

@Tool({ name: 'test_missing_capability', description: "Needs the client's sampling: refused with -32021 without it" })
export class MissingCapabilityTool {
  run(_args: object, ctx?: McpToolContext) {
    if (ctx?.mcp.clientCapabilities?.sampling) return 'Success';
    // Asking a client that declared no sampling is refused by the SDK's capability gate (-32021), never sent.
    return inputRound({ inputRequests: { need_sampling: sample('ping', 1) } });
  }
}

/** Every tool of this file, for the server's Toolkit. */
export const INPUT_ROUND_TOOLS = [
  InputElicitationTool,
  InputSamplingTool,
  InputRootsTool,
  InputRequestStateTool,
  InputTamperedStateTool,
  InputMultipleTool,
  InputMultiRoundTool,
  InputCapabilitiesTool,
  MissingCapabilityTool,
];
