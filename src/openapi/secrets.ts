import { InvalidArgumentError } from '../errors';
import { REDACTED } from '../toolkit/redaction';
import { expandVariables } from '../http/variables';

/** Where `${NAME}` (or `${env:NAME}`, `${NAME:-fallback}`) in a header is read from: the process's environment, or a source of the caller's. */
export type EnvSource = Readonly<Record<string, string | undefined>> | ((name: string) => string | undefined);

/** Headers with their `${NAME}`s read now, and every value read, to mask wherever text leaves the tool. */
export interface ResolvedHeaders {
  headers: Record<string, string>;
  /** The lower-case names of headers that held a `${NAME}`: never sent to another origin. */
  secretNames: Set<string>;
  secrets: string[];
}

/**
 * Reads each `${NAME}` of `headers` at call time (so a rotated token is used at once). A name
 * that is not set is an error naming it, never a request with an empty credential.
 */
export function resolveHeaders(headers: Readonly<Record<string, string>> | undefined, env: EnvSource | undefined): ResolvedHeaders {
  const read = typeof env === 'function' ? env : (name: string) => (env ?? process.env)[name];
  const resolved: ResolvedHeaders = { headers: {}, secretNames: new Set(), secrets: [] };
  for (const [name, template] of Object.entries(headers ?? {})) {
    resolved.headers[name] = expandVariables(
      template,
      read,
      (variable) => new InvalidArgumentError(`the header ${name} needs the environment variable ${variable}, which is not set`),
      (value) => resolved.secrets.push(value),
    );
    if (template.includes('${')) resolved.secretNames.add(name.toLowerCase());
  }
  return resolved;
}

/** `text` with every secret replaced by `[redacted]`: a server that echoes a header back does not leak it to the model. */
export function masked(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join(REDACTED);
  return out;
}
