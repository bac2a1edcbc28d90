import { ToolnexusError } from '../errors';

/**
 * A `ToolnexusModule` set-up problem found while the Nest application boots: options
 * missing or malformed, or two `@Tool` providers that would answer to one name.
 * Like a registration error, it fails fast so a misconfigured app never starts serving.
 */
export class ToolnexusModuleError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_NEST_MODULE';
}
