/**
 * RFC 6570 URI templates of level 1 (`{name}` expressions only), the form resource templates
 * use in practice: matching a URI to a template, and naming the template's variables. Larger
 * operators (`{+path}`, `{?query}`) are refused at registration rather than half-supported.
 */
import { InvalidArgumentError } from '../../../errors';

const EXPRESSION = /\{([A-Za-z0-9_]+)\}/g;
const MAX_URI_LENGTH = 2048;

/** A parsed template: its variables, and a matcher that gives their values for a URI. */
export interface UriTemplate {
  readonly template: string;
  readonly variables: string[];
  match(uri: string): Record<string, string> | undefined;
}

export function parseUriTemplate(template: string): UriTemplate {
  if (/\{[^A-Za-z0-9_}]/.test(template) || /\{[^}]*$/.test(template))
    throw new InvalidArgumentError(`URI template ${template}: only simple {name} expressions (RFC 6570 level 1) are supported`);
  const variables: string[] = [];
  let pattern = '^';
  let last = 0;
  for (const found of template.matchAll(EXPRESSION)) {
    pattern += escape(template.slice(last, found.index));
    const name = found[1] as string;
    if (variables.includes(name)) throw new InvalidArgumentError(`URI template ${template}: {${name}} appears twice`);
    variables.push(name);
    pattern += '([^/?#]+)';
    last = (found.index ?? 0) + found[0].length;
  }
  pattern += `${escape(template.slice(last))}$`;
  const regex = new RegExp(pattern);
  return {
    template,
    variables,
    match(uri: string): Record<string, string> | undefined {
      if (uri.length > MAX_URI_LENGTH) return undefined;
      const found = regex.exec(uri);
      if (!found) return undefined;
      const values: Record<string, string> = {};
      for (const [index, name] of variables.entries()) {
        try {
          values[name] = decodeURIComponent(found[index + 1] as string);
        } catch {
          return undefined;
        }
      }
      return values;
    },
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
