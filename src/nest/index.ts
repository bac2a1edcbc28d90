/**
 * The NestJS integration: `import { ToolnexusModule } from 'toolnexus-ts/nest'`.
 * A separate entry point, so that users of the core never need `@nestjs/*` installed.
 */
export { ToolnexusModule, TOOLNEXUS_OPTIONS } from './toolnexus.module';
export { ToolnexusModuleError } from './errors';
export { ToolnexusExceptionFilter, httpStatusOf } from './exception-filter';
export type { ToolnexusErrorBody } from './exception-filter';
export type {
  ToolnexusModuleOptions,
  ToolnexusModuleRootOptions,
  ToolnexusRunnerOptions,
  ToolnexusModuleAsyncOptions,
  ToolnexusOptionsFactory,
  NestToolContext,
} from './options';
export { ToolnexusInboxModule } from './inbox.module';
export type { ToolnexusInboxModuleOptions } from './inbox.module';
export { ToolnexusChatModule } from './chat.module';
export type { ToolnexusChatModuleOptions } from './chat.module';
export { ToolnexusA2AModule } from './a2a.module';
export { ToolnexusMcpModule } from './mcp.module';
export type { ToolnexusMcpModuleOptions } from './mcp.module';
export type { ToolnexusA2AModuleOptions } from './a2a.module';
export { ToolnexusChannelsModule } from './channels.module';
export type { ToolnexusChannelsModuleOptions } from './channels.module';
