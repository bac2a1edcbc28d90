import { ToolnexusError } from '../../errors';

/**
 * A remote A2A agent that cannot be used: its card could not be read or is not an agent card,
 * a header's `${VAR}` is not set, a response passed its bound. Thrown by `a2aAgentTool` while
 * it reads the card; during a call it becomes the call's error result. Its message never holds
 * a header's value.
 */
export class A2AAgentError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_A2A_AGENT';
}
