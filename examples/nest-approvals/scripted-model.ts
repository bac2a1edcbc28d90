import { FunctionModel } from 'toolnexus-ts/models';

/**
 * A scripted stand-in for a chat model, so the example runs offline: "pay N from X to Y"
 * becomes a `transfer` call, and a tool result becomes the answer. Swap in
 * `new OpenAIChatModel({ baseUrl, apiKey, model })` for a real one.
 */
export function scriptedModel(): FunctionModel {
  return new FunctionModel(({ messages }) => {
    const last = messages[messages.length - 1];
    if (last?.role === 'tool') return last.isError ? `The transfer did not happen: ${last.content}` : `Done: ${last.content}.`;
    const asked = last?.role === 'user' ? /pay (\d+) from (\S+) to (\S+)/i.exec(last.content) : null;
    if (!asked) return 'I move money between accounts: say "pay 500 from acc-1 to acc-2".';
    return { toolCalls: [{ name: 'transfer', arguments: { amount: Number(asked[1]), from: asked[2], to: asked[3] } }] };
  });
}
