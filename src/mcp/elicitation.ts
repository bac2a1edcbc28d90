/**
 * What both sides of MCP say about an elicitation's answer: the server reads it from its client
 * (server/elicitation.ts), the client sends it for a remote server's question (client/elicitation.ts).
 */

/** The answer an MCP elicitation result stands for. */
export interface ElicitationReply {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}
