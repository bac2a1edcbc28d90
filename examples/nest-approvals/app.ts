import 'reflect-metadata';
import { Module, ValidationPipe, type DynamicModule, type INestApplication } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, NestFactory } from '@nestjs/core';
import type { PendingStore } from 'toolnexus-ts';
import { ToolnexusExceptionFilter, ToolnexusModule } from 'toolnexus-ts/nest';
import { ChatController } from './chat.controller';
import { CurrentUser, LedgerService, TransferTool } from './payments';
import { scriptedModel } from './scripted-model';

export interface ApprovalsAppOptions {
  /** Where suspensions and halted runs are kept; default in memory. Give a SqlitePendingStore to survive restarts. */
  store?: PendingStore;
}

@Module({})
export class ApprovalsModule {
  static register(options: ApprovalsAppOptions = {}): DynamicModule {
    return {
      module: ApprovalsModule,
      imports: [
        ToolnexusModule.forRoot({
          model: scriptedModel(),
          store: options.store,
          systemPrompt: 'You move money between accounts, only with approval.',
        }),
      ],
      controllers: [ChatController],
      providers: [
        LedgerService,
        CurrentUser,
        TransferTool,
        { provide: APP_PIPE, useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }) },
        { provide: APP_FILTER, useClass: ToolnexusExceptionFilter },
      ],
    };
  }
}

/** The HTTP app, not yet listening. */
export async function createApprovalsApp(options: ApprovalsAppOptions = {}): Promise<INestApplication> {
  return NestFactory.create(ApprovalsModule.register(options), { logger: ['error', 'warn'] });
}
