import { createHash } from 'node:crypto';

/** The most statement texts one store names; past it (never reached by its finite set of queries) they run unnamed. */
const MAX_NAMED = 512;

/**
 * Names each statement text once, so `pg` prepares it once per connection and PostgreSQL
 * parses and plans it once instead of on every call. The name is a hash of the text: the
 * same statement gets the same name on every connection and in every process, and two
 * stores (other table prefixes) never share one.
 */
export class PreparedStatements {
  private readonly names = new Map<string, string>();

  config(text: string, values: unknown[]): { name?: string; text: string; values: unknown[] } {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMED) {
      name = `toolnexus_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      this.names.set(text, name);
    }
    return name === undefined ? { text, values } : { name, text, values };
  }
}
