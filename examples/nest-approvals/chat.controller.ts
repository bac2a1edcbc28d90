import { Body, Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { IsBoolean, IsIn, IsNotEmpty, IsObject, IsOptional, IsString } from 'class-validator';
import { AgentRunner, ResumeCoordinator, type AnswerReason, type PendingRequest, type RunResult } from 'toolnexus-ts';

export class ChatDto {
  @IsString() @IsNotEmpty() message!: string;
}

export class AnswerDto {
  @IsBoolean() ok!: boolean;
  @IsOptional() @IsObject() data?: Record<string, unknown>;
  @IsOptional() @IsIn(['declined', 'cancelled', 'expired']) reason?: AnswerReason;
}

/** What the API returns for a run: its state, and the open requests when it waits on a human. */
export interface RunView {
  runId: string;
  status: RunResult['status'];
  text: string;
  pending?: PendingRequest;
  pendings?: PendingRequest[];
}

export interface PendingView {
  request: PendingRequest;
  tool: string;
  args: unknown;
  runId?: string;
  createdAt: string;
}

@Controller()
export class ChatController {
  constructor(
    private readonly runner: AgentRunner,
    private readonly coordinator: ResumeCoordinator,
  ) {}

  /** Runs the agent; when a tool needs approval the run halts and the response carries the request. */
  @Post('chat')
  @HttpCode(200)
  async chat(@Req() request: object, @Body() body: ChatDto): Promise<RunView> {
    // `context.request` lets request-scoped tools resolve in this request (docs/dependency-injection.md).
    return view(await this.runner.run(body.message, { context: { request } }));
  }

  /** Every open suspension, oldest first. */
  @Get('pending')
  async pending(): Promise<PendingView[]> {
    const calls = await this.coordinator.list({ status: 'pending' });
    return calls.map(({ request, tool, args, runId, createdAt }) => ({ request, tool, args, runId, createdAt }));
  }

  /**
   * Answers a suspension and continues its run. The same answer again (a retried POST)
   * gets the run's result again; a stale or forged id is 404, a contradicting answer 409
   * (ToolnexusExceptionFilter); a malformed body 400 (ValidationPipe). None of them touches the run.
   */
  @Post('answers/:id')
  @HttpCode(200)
  async answer(@Req() request: object, @Param('id') id: string, @Body() body: AnswerDto): Promise<RunView> {
    // The replay runs in the answering request: the approver's, not the asker's.
    return view(await this.runner.resume({ id, ok: body.ok, data: body.data, reason: body.reason }, { context: { request } }));
  }
}

function view(result: RunResult): RunView {
  const { runId, status, text, pending, pendings } = result;
  return { runId, status, text, ...(pending ? { pending, pendings } : {}) };
}
