import type { Answer, PendingRequest } from '../../results/wire';
import { MAX_PRINCIPAL_LENGTH, type Principal } from '../../suspension/audit';
import type { ElicitationReply } from '../elicitation';

/** The JSON Schema of one field of an MCP elicitation form (flat primitives and enums only). */
export type FormField = Record<string, unknown> & { type: 'string' | 'number' | 'integer' | 'boolean' | 'array' };

/** What an MCP client is asked in place of a suspension. */
export type Elicitation =
  | { mode: 'form'; message: string; requestedSchema: { type: 'object'; properties: Record<string, FormField>; required?: string[] } }
  | { mode: 'url'; message: string; url: string; elicitationId: string };

/** What the client can do, as its `elicitation` capability says. */
export interface ElicitationSupport {
  form: boolean;
  url: boolean;
}

/** An elicitation for `request`, or why it cannot be asked through one (it is then answered out of band). */
export type ElicitationPlan = { elicit: Elicitation } | { outOfBand: string };

/**
 * How a suspension is put to an MCP client: an approval is a form with no fields (accept
 * approves, decline declines); an input or question is a form with `data.schema` (one `answer`
 * text field when it has none); an authorization is a URL-mode elicitation. A schema MCP forms
 * cannot carry (nested objects, `pattern`, …) is refused with the reason, never sent half-way.
 */
export function elicitationFor(request: PendingRequest, support: ElicitationSupport): ElicitationPlan {
  if (
    request.kind === 'authorization' ||
    (request.url !== undefined && request.data?.schema === undefined && request.kind !== 'approval')
  ) {
    if (request.url === undefined) return { outOfBand: 'the authorization request has no url' };
    if (!support.url) return { outOfBand: 'the client does not support URL elicitation' };
    return { elicit: { mode: 'url', message: request.prompt, url: request.url, elicitationId: request.id } };
  }
  if (!support.form) return { outOfBand: 'the client does not support form elicitation' };
  const schema = request.data?.schema;
  if (schema === undefined) {
    const properties: Record<string, FormField> =
      request.kind === 'approval' ? {} : { answer: { type: 'string', title: 'Answer', description: request.prompt } };
    const requestedSchema =
      request.kind === 'approval' ? { type: 'object' as const, properties } : { type: 'object' as const, properties, required: ['answer'] };
    return { elicit: { mode: 'form', message: request.prompt, requestedSchema } };
  }
  const form = formSchemaOf(schema);
  if ('problem' in form) return { outOfBand: `its data.schema cannot be an MCP elicitation form: ${form.problem}` };
  return { elicit: { mode: 'form', message: request.prompt, requestedSchema: form.schema } };
}

/** The library's answer for what the client's user did. */
export function answerOf(request: PendingRequest, reply: ElicitationReply): Answer {
  if (reply.action === 'accept') {
    return reply.content && Object.keys(reply.content).length > 0
      ? { id: request.id, ok: true, data: reply.content }
      : { id: request.id, ok: true };
  }
  return { id: request.id, ok: false, reason: reply.action === 'decline' ? 'declined' : 'cancelled' };
}

/**
 * Why an accepted answer does not fit the elicitation asked, or `undefined`: a key the form did
 * not ask for (a URL elicitation asks for none), a required field left out, a value of another
 * type, outside its enum or bounds. The inbox makes the same check (src/inbox/input-schema.ts);
 * a refused answer settles nothing, and the suspension waits to be answered again.
 */
export function answerProblem(asked: Elicitation, reply: ElicitationReply): string | undefined {
  if (reply.action !== 'accept' || reply.content === undefined) return undefined;
  const content = reply.content;
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return 'the content is not an object';
  const properties = asked.mode === 'form' ? asked.requestedSchema.properties : {};
  const problems: string[] = [];
  for (const key of Object.keys(content)) if (!Object.hasOwn(properties, key)) problems.push(`${key} is not a field of this form`);
  const required = asked.mode === 'form' ? (asked.requestedSchema.required ?? []) : [];
  for (const [name, field] of Object.entries(properties)) {
    const value = content[name];
    if (value === undefined) {
      if (required.includes(name)) problems.push(`${name} is required`);
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem) problems.push(`${name} ${problem}`);
  }
  return problems.length > 0 ? problems.slice(0, 10).join('; ') : undefined;
}

function valueProblem(field: FormField, value: unknown): string | undefined {
  const choices = enumOf(field);
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string': {
      if (typeof value !== 'string') return 'must be text';
      if (choices && !choices.includes(value)) return `must be one of ${choices.join(', ')}`;
      const { minLength, maxLength } = field as { minLength?: unknown; maxLength?: unknown };
      if (typeof minLength === 'number' && value.length < minLength) return `must be at least ${minLength} characters`;
      if (typeof maxLength === 'number' && value.length > maxLength) return `must be at most ${maxLength} characters`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return 'must be a list of choices';
      const items = enumOf((field.items ?? {}) as Record<string, unknown>);
      const wrong = items ? value.find((item) => !items.includes(item)) : undefined;
      return wrong === undefined ? undefined : `has ${JSON.stringify(wrong).slice(0, 80)}, which is not a choice`;
    }
    default: {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      const { minimum, maximum } = field as { minimum?: unknown; maximum?: unknown };
      if (typeof minimum === 'number' && value < minimum) return `must be at least ${minimum}`;
      if (typeof maximum === 'number' && value > maximum) return `must be at most ${maximum}`;
      return undefined;
    }
  }
}

/** The values a field (or array items schema) allows, from `enum` or `oneOf`/`anyOf` of `const`s. */
function enumOf(field: Record<string, unknown>): unknown[] | undefined {
  if (Array.isArray(field.enum)) return field.enum as unknown[];
  const listed = (Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined) as unknown[] | undefined;
  return listed?.map((option) => (option as { const?: unknown } | null)?.const);
}

/**
 * Who answered an elicitation, as the audit records it and the tool sees it
 * (`ctx.answer.answeredBy`): the authenticated client (`mcp:<clientId>`), else the session
 * (`mcp:session:<id>`), else the one client of a stdio server (`mcp:client`). Never the name
 * a client gives itself in `initialize`: an audit must not record a name nobody checked.
 */
export function elicitationPrincipal(who: { clientId?: string; sessionId?: string }): Principal {
  const id =
    who.clientId !== undefined && who.clientId !== ''
      ? `mcp:${who.clientId}`
      : who.sessionId !== undefined
        ? `mcp:session:${who.sessionId}`
        : 'mcp:client';
  return { id: id.slice(0, MAX_PRINCIPAL_LENGTH) };
}

const TOP_IGNORED = new Set(['$schema', 'title', 'description', 'additionalProperties']);
const COMMON_KEYS = ['type', 'title', 'description', 'default'];
const KEYS_BY_TYPE: Record<string, Set<string>> = {
  string: new Set([...COMMON_KEYS, 'minLength', 'maxLength', 'format', 'enum', 'enumNames', 'oneOf']),
  number: new Set([...COMMON_KEYS, 'minimum', 'maximum']),
  integer: new Set([...COMMON_KEYS, 'minimum', 'maximum']),
  boolean: new Set(COMMON_KEYS),
  array: new Set([...COMMON_KEYS, 'items', 'minItems', 'maxItems']),
};
const FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** `schema` as an MCP form schema, or what keeps it from being one. */
export function formSchemaOf(
  schema: unknown,
): { schema: { type: 'object'; properties: Record<string, FormField>; required?: string[] } } | { problem: string } {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { problem: 'it is not an object schema' };
  const top = schema as Record<string, unknown>;
  if (top.type !== 'object') return { problem: 'its type is not "object"' };
  for (const key of Object.keys(top)) {
    if (key !== 'type' && key !== 'properties' && key !== 'required' && !TOP_IGNORED.has(key))
      return { problem: `the keyword ${key} has no MCP form equivalent` };
  }
  const properties = top.properties ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    return { problem: 'its properties are not an object' };
  const fields: Record<string, FormField> = {};
  for (const [name, value] of Object.entries(properties)) {
    const field = fieldOf(value);
    if (typeof field === 'string') return { problem: `property ${name}: ${field}` };
    fields[name] = field;
  }
  const out: { type: 'object'; properties: Record<string, FormField>; required?: string[] } = { type: 'object', properties: fields };
  if (top.required !== undefined) {
    if (!Array.isArray(top.required) || !top.required.every((name) => typeof name === 'string' && name in fields))
      return { problem: 'required must list property names' };
    out.required = top.required.slice() as string[];
  }
  return { schema: out };
}

function fieldOf(value: unknown): FormField | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a schema object';
  const field = value as Record<string, unknown>;
  const type = field.type;
  if (typeof type !== 'string' || !(type in KEYS_BY_TYPE))
    return `type ${JSON.stringify(type)} is not a string, number, integer, boolean or enum list`;
  const allowed = KEYS_BY_TYPE[type] as Set<string>;
  for (const key of Object.keys(field)) if (!allowed.has(key)) return `the keyword ${key} has no MCP form equivalent`;
  if (type === 'string' && field.format !== undefined && !FORMATS.has(field.format as string))
    return `format ${JSON.stringify(field.format)} is not one of email, uri, date, date-time`;
  if (field.enum !== undefined && (!Array.isArray(field.enum) || !field.enum.every((item) => typeof item === 'string')))
    return 'an enum must list strings';
  if (type === 'array') {
    const items = field.items as Record<string, unknown> | undefined;
    const listed = items && (Array.isArray(items.enum) || Array.isArray(items.anyOf));
    if (!listed) return 'an array field must be a multi-select of string enum items';
  }
  return { ...field, type } as FormField;
}
