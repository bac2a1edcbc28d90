import { InvalidArgumentError } from '../errors';
import { REDACTED } from '../toolkit/redaction';

/** Where `${NAME}` in a header is read from: the process's environment, or a source of the caller's. */
export type EnvSource = Readonly<Record<string, string | undefined>> | ((name: string) => string | undefined);

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

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
    let secret = false;
    resolved.headers[name] = template.replace(PLACEHOLDER, (_, variable: string) => {
      const value = read(variable);
      if (value === undefined || value === '')
        throw new InvalidArgumentError(`the header ${name} needs the environment variable ${variable}, which is not set`);
      secret = true;
      resolved.secrets.push(value);
      return value;
    });
    if (secret) resolved.secretNames.add(name.toLowerCase());
  }
  return resolved;
}

/** `text` with every secret replaced by `[redacted]`: a server that echoes a header back does not leak it to the model. */
export function masked(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join(REDACTED);
  return out;
}
