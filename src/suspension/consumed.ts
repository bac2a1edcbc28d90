import type { Answer, PendingRequest } from '../results/wire';

/** What a consumed field of an answer reads as wherever the answer is kept: the store, a chain's link, every copy shown. */
export const CONSUMED = '[consumed]';

/**
 * The fields an answer to a request of kind `authorization` carries that are the login's
 * credentials: OAuth's authorization response (RFC 6749 §4.1.2 and §4.2.2: the code, its
 * state, tokens), and `redirect`, the URL the browser was sent back to, which holds them.
 * Its other fields (an account, claims) are the caller's to keep, as any answer's are.
 */
const LOGIN_CREDENTIALS = new Set(['code', 'state', 'redirect', 'access_token', 'id_token', 'refresh_token']);

/**
 * The fields of `answer.data` the replay consumes and nothing keeps (docs/design.md, glossary:
 * "consumed"): a login's credentials in an answer to a request of kind `authorization`
 * ({@link LOGIN_CREDENTIALS}), and any field the request marks `writeOnly: true` in its
 * `data.schema` (JSON Schema's word for a value that is sent and never returned: a password,
 * a one-time code).
 */
export function consumedFields(request: PendingRequest, answer: Answer): string[] {
  const data = answer.data;
  if (data === undefined) return [];
  const schema = request.data?.schema;
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : undefined;
  const login = request.kind === 'authorization';
  return Object.keys(data).filter((name) => {
    if (login && LOGIN_CREDENTIALS.has(name)) return true;
    const property = properties && Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
    return isObject(property) && property.writeOnly === true;
  });
}

/**
 * The answer as it is kept: each consumed field reads {@link CONSUMED}. The replay is given the
 * answer whole; the claim, the chain's link and the comparison of a repeated answer get this.
 * The same object when nothing is consumed.
 */
export function keptAnswer(request: PendingRequest, answer: Answer): Answer {
  const consumed = consumedFields(request, answer);
  if (consumed.length === 0) return answer;
  const data: Record<string, unknown> = { ...answer.data };
  for (const name of consumed) data[name] = CONSUMED;
  return { ...answer, data };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
