import type { JsonSchema } from '../results/json-schema';

/** The part of a registered tool the provider adapters need. */
export interface ToolSchemaSource {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** OpenAI chat-completions tool entry. */
export interface OpenAITool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

/** Anthropic messages-API tool entry. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** Gemini `tools` entry: one element that holds every declaration. */
export interface GeminiTools {
  functionDeclarations: Array<{ name: string; description: string; parameters: JsonSchema }>;
}

export function toOpenAITools(tools: readonly ToolSchemaSource[]): OpenAITool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
}

export function toAnthropicTools(tools: readonly ToolSchemaSource[]): AnthropicTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
}

export function toGeminiTools(tools: readonly ToolSchemaSource[]): [GeminiTools] {
  return [{ functionDeclarations: tools.map((t) => ({ name: t.name, description: t.description, parameters: forGemini(t.inputSchema) })) }];
}

/** Gemini's `parameters` is an OpenAPI subset that rejects `additionalProperties`: drop it, deeply. */
function forGemini(schema: JsonSchema): JsonSchema {
  const { additionalProperties: _dropped, properties, items, ...rest } = schema;
  const out: JsonSchema = { ...rest };
  if (properties) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, forGemini(v)]));
  }
  if (items) out.items = forGemini(items);
  return out;
}
