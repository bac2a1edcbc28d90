import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import type { PendingRequest } from 'toolnexus-ts';
import { AgentRunner, type RunResult } from 'toolnexus-ts/agents';

export class ChatDto {
  @IsString() @IsNotEmpty() message!: string;
}

/** What the API returns for a run: its state, and the open requests when it waits on a human. */
export interface RunView {
  runId: string;
  status: RunResult['status'];
  text: string;
  pending?: PendingRequest;
  pendings?: PendingRequest[];
}

/**
 * The app's own endpoint. Answering is not here: the approvals inbox mounted at /inbox
 * (ToolnexusInboxModule) lists, answers and cancels suspensions, signed in and CSRF-checked.
 */
@Controller()
export class ChatController {
  constructor(private readonly runner: AgentRunner) {}

  /** Runs the agent; when a tool needs approval the run halts and the response carries the request. */
  @Post('chat')
  @HttpCode(200)
  async chat(@Req() request: object, @Body() body: ChatDto): Promise<RunView> {
    // `context.request` lets request-scoped tools resolve in this request (docs/dependency-injection.md).
    return view(await this.runner.run(body.message, { context: { request } }));
  }
}

function view(result: RunResult): RunView {
  const { runId, status, text, pending, pendings } = result;
  return { runId, status, text, ...(pending ? { pending, pendings } : {}) };
}
