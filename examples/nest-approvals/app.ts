import 'reflect-metadata';
import { Module, ValidationPipe, type DynamicModule, type INestApplication } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, NestFactory } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import { rulesPolicy, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { bearerTokens, type BearerTokenEntry } from 'toolnexus-ts/inbox';
import { ToolnexusExceptionFilter, ToolnexusInboxModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { ChatController } from './chat.controller';
import { CurrentUser, LedgerService, TransferTool } from './payments';
import { scriptedModel } from './scripted-model';

/** The example's approvers. A real service reads tokens from its secret store, or authorizes with its own SSO. */
export const DEMO_APPROVERS: readonly BearerTokenEntry[] = [
  { token: 'alice-demo-token-please-change', principal: { id: 'alice', name: 'alice' } },
  { token: 'carol-demo-token-please-change', principal: { id: 'carol', name: 'carol' } },
];

export interface ApprovalsAppOptions {
  /** Where suspensions and halted runs are kept; default in memory. Give a SqliteStore to survive restarts. */
  store?: SuspensionStore & RunStore;
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
          // Who may answer, at every door (the inbox below, the chat): Alice and Carol approve transfers.
          policy: rulesPolicy([{ principals: ['alice', 'carol'], kinds: ['approval'], tools: ['transfer'] }]),
        }),
        // GET /inbox/ (the page), /inbox/api/... (the JSON API): answering resumes the run here.
        ToolnexusInboxModule.forRoot({
          path: 'inbox',
          authorize: bearerTokens(DEMO_APPROVERS),
          // The replay runs in the answering request; CurrentUser (request-scoped) reads the approver from it.
          context: (request, principal) => {
            (request as IncomingMessage & { user?: unknown }).user = principal;
            return { request };
          },
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
