/**
 * `${VAR}`, `${env:VAR}` and `${VAR:-fallback}` in `text`, each read with `read` (the MCP
 * source's config, the A2A tool's and the HTTP tools' headers all use this one syntax). A
 * variable that is not set and has no fallback is `missing(variable)`'s error: refused rather
 * than sent empty, and named, never its value. Every value read goes to `found`, for the caller
 * to mask wherever text leaves it.
 */
export function expandVariables(
  text: string,
  read: (variable: string) => string | undefined,
  missing: (variable: string) => Error,
  found?: (value: string) => void,
): string {
  return text.replace(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, variable: string, fallback?: string) => {
    const value = read(variable) ?? fallback;
    if (value === undefined) throw missing(variable);
    if (value !== '') found?.(value);
    return value;
  });
}
