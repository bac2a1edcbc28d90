/** The provider's explanation from an error body (`{error:{message}}`, `{error:"..."}`, `{message}`, `{detail}`), else the body itself. */
export function providerMessage(body: string, statusText: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return statusText || 'no message';
  try {
    const parsed: unknown = JSON.parse(trimmed);
    const found = messageIn(parsed);
    if (found !== undefined) return found;
  } catch {
    // not JSON: the raw text is the message
  }
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}...` : trimmed;
}

function messageIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const error = record.error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as Record<string, unknown>).message === 'string') {
    return (error as Record<string, unknown>).message as string;
  }
  if (typeof record.message === 'string') return record.message;
  if (typeof record.detail === 'string') return record.detail;
  return undefined;
}
