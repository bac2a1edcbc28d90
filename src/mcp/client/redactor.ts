/** The shortest value redacted: shorter ones (`1`, `on`) would mask ordinary words everywhere. */
const MIN_SECRET = 4;
/** Header words (after `Bearer`, `Basic`, …) this long are redacted on their own too. */
const MIN_WORD = 8;

/**
 * The configured secrets of one MCP server (its `env` values, its `headers` values, and every
 * value a `${VAR}` put into them), redacted as `***` in every text this library makes from what
 * the server or its transport said: connection errors, call failures, results, log lines,
 * elicitation prompts. A hostile server that echoes a header back (a 401 body quoting
 * `Authorization`) shows nothing of it. The forms a secret is likely echoed in are redacted too:
 * the token after a scheme word, Basic credentials decoded, URL-encoded.
 */
export class SecretRedactor {
  private secrets: string[];
  private readonly known: Set<string>;

  constructor(values: Iterable<string>) {
    this.secrets = SecretRedactor.forms(values);
    this.known = new Set(this.secrets);
  }

  /**
   * Redacts `values` too from now on: a token obtained after connecting (OAuth). The OAuth
   * provider tells its tokens on every request, so a value already redacted costs a lookup,
   * not a rebuild of the list.
   */
  add(values: Iterable<string>): void {
    const fresh = SecretRedactor.forms(values).filter((form) => !this.known.has(form));
    if (fresh.length === 0) return;
    for (const form of fresh) this.known.add(form);
    this.secrets = [...this.known].sort((a, b) => b.length - a.length);
  }

  /** Every form of `values` that is redacted: as is, URL-encoded, JSON-escaped, its long words, Basic decoded. */
  private static forms(values: Iterable<string>): string[] {
    const found = new Set<string>();
    const add = (value: string): void => {
      if (value.length >= MIN_SECRET) found.add(value);
    };
    for (const value of values) {
      add(value);
      add(encodeURIComponent(value));
      add(JSON.stringify(value).slice(1, -1));
      for (const word of value.split(/\s+/)) if (word.length >= MIN_WORD) add(word);
      const basic = /^basic\s+(\S+)$/i.exec(value.trim());
      if (basic) {
        const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
        add(decoded);
        const colon = decoded.indexOf(':');
        if (colon >= 0) add(decoded.slice(colon + 1));
      }
    }
    // Longest first, so a secret containing another is redacted whole.
    return [...found].sort((a, b) => b.length - a.length);
  }

  /** `text` with every secret replaced by `***`. */
  text(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('***');
    return out;
  }

  /** A JSON-like value with every string in it redacted (keys too); other values as they are. */
  deep<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    return this.walk(value, 0) as T;
  }

  /** An error whose message (and its cause's, down the chain) is redacted: the original is not kept. */
  error(error: unknown): Error {
    // By shape, not instanceof: fetch's errors come from Node's own realm, not a sandbox's (jest's).
    const isErrorLike = typeof error === 'object' && error !== null && typeof (error as Error).message === 'string';
    const source = isErrorLike ? (error as Error) : new Error(String(error));
    const copy = new Error(this.text(source.message));
    copy.name = typeof source.name === 'string' ? source.name : 'Error';
    const code = (source as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') (copy as Error & { code?: unknown }).code = code;
    copy.stack = `${copy.name}: ${copy.message}`;
    return copy;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (depth > 64 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => this.walk(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.text(key), this.walk(item, depth + 1)]));
  }
}
