import 'reflect-metadata';
import { Inject, Injectable, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, pending, pendingOf, type ToolContext } from 'toolnexus-ts';
import { AlreadyResolvedError, ResumeCoordinator, UnknownSuspensionError, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusModule, ToolnexusModuleError, type NestToolContext } from 'toolnexus-ts/nest';
import { LedgerService, TransferTool } from '../fixtures/nest/ledger';

async function boot(store: SuspensionStore & RunStore): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [ToolnexusModule.forRootAsync({ useFactory: () => ({ store }) })],
    providers: [LedgerService, TransferTool],
  }).compile();
  return app.init();
}

describe('ResumeCoordinator injected by ToolnexusModule', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records a suspension, replays it once on the answer, and keeps the injected service untouched until then', async () => {
    const app = await boot(new SqliteStore({ filename: join(dir, 'app.db') }));
    const coordinator = app.get(ResumeCoordinator);
    expect(coordinator.toolkit).toBe(app.get(Toolkit));

    const first = await coordinator.execute('transfer', { from: 'a', to: 'b', amount: 9 }, undefined, { runId: 'run-1' });
    const request = pendingOf(first);
    expect(request?.prompt).toBe('Transfer 9 from a to b?');
    expect((await coordinator.list({ status: 'pending', runId: 'run-1' })).map((c) => c.request.id)).toEqual([request?.id]);
    expect(app.get(LedgerService).moves).toEqual([]);

    const answer = { id: request?.id ?? '', ok: true };
    expect(await coordinator.resolve(answer)).toEqual({ output: 'moved 9 from a to b', isError: false });
    expect(await coordinator.resolve(answer)).toEqual({ output: 'moved 9 from a to b', isError: false });
    expect(app.get(LedgerService).moves).toEqual(['a->b:9']);
    await expect(coordinator.resolve({ id: answer.id, ok: false })).rejects.toThrow(AlreadyResolvedError);
    await expect(coordinator.resolve({ id: 'pnd-forged', ok: true })).rejects.toThrow(UnknownSuspensionError);
    expect(app.get(LedgerService).moves).toEqual(['a->b:9']);
    await app.close();
  });

  it('resumes after a restart: the store is closed with the first app and reopened by the second', async () => {
    const filename = join(dir, 'restart.db');
    const before = await boot(new SqliteStore({ filename }));
    const request = pendingOf(await before.get(ResumeCoordinator).execute('transfer', { from: 'a', to: 'b', amount: 3 }));
    await before.close();
    // Closed on shutdown: the handle no longer serves reads.
    await expect(before.get(ResumeCoordinator).get(request?.id ?? '')).rejects.toThrow();

    const after = await boot(new SqliteStore({ filename }));
    const coordinator = after.get(ResumeCoordinator);
    expect((await coordinator.get(request?.id ?? ''))?.status).toBe('pending');
    expect(await coordinator.resolve({ id: request?.id ?? '', ok: true })).toEqual({ output: 'moved 3 from a to b', isError: false });
    expect(after.get(LedgerService).moves).toEqual(['a->b:3']);
    await after.close();
  });

  it('leaves the store open when told to', async () => {
    const store = new SqliteStore({ filename: join(dir, 'shared.db') });
    const app = await Test.createTestingModule({
      imports: [ToolnexusModule.forRoot({ store, closeStoreOnShutdown: false })],
      providers: [LedgerService, TransferTool],
    }).compile();
    await app.init();
    const request = pendingOf(await app.get(ResumeCoordinator).execute('transfer', { from: 'a', to: 'b', amount: 1 }));
    await app.close();
    expect((await store.get(request?.id ?? ''))?.status).toBe('pending');
    await store.close();
  });

  it('replays a request-scoped tool in the context of the request that answers', async () => {
    @Injectable({ scope: Scope.REQUEST })
    @Tool({ name: 'approve_as', description: 'Records who approved' })
    class ApproveAsTool {
      constructor(@Inject(REQUEST) private readonly request: { user: string } | undefined) {}
      run(_args: object, ctx?: ToolContext) {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: `requested by ${this.request?.user ?? 'nobody'}` });
        return `approved by ${this.request?.user ?? 'nobody'}`;
      }
    }
    const app = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [ApproveAsTool] }).compile();
    await app.init();
    const coordinator = app.get(ResumeCoordinator);
    const asker: NestToolContext = { request: { user: 'ada' } };
    const request = pendingOf(await coordinator.execute('approve_as', {}, asker));
    expect(request?.prompt).toBe('requested by ada');
    const approver: NestToolContext = { request: { user: 'bob' } };
    expect(await coordinator.resolve({ id: request?.id ?? '', ok: true }, approver)).toEqual({ output: 'approved by bob', isError: false });
    await app.close();
  });

  it('answers inline with waitFor, and reports every call to the toolkit hooks', async () => {
    const asked: string[] = [];
    const metrics: Array<{ tool: string; pending: boolean }> = [];
    const app = await Test.createTestingModule({
      imports: [
        ToolnexusModule.forRoot({
          waitFor: (request) => {
            asked.push(request.prompt);
            return { id: request.id, ok: true };
          },
          hooks: { onMetric: (event) => metrics.push({ tool: event.tool, pending: event.pending }) },
        }),
      ],
      providers: [LedgerService, TransferTool],
    }).compile();
    await app.init();
    const result = await app.get(ResumeCoordinator).execute('transfer', { from: 'a', to: 'b', amount: 4 });
    expect(result).toEqual({ output: 'moved 4 from a to b', isError: false });
    expect(asked).toEqual(['Transfer 4 from a to b?']);
    expect(metrics).toEqual([
      { tool: 'transfer', pending: true },
      { tool: 'transfer', pending: false },
    ]);
    expect(await app.get(ResumeCoordinator).list()).toEqual([]);
    await app.close();
  });

  it('fails the boot when the async options factory returns nothing', async () => {
    const building = Test.createTestingModule({
      imports: [ToolnexusModule.forRootAsync({ useFactory: () => undefined as never })],
    }).compile();
    await expect(building).rejects.toThrow(ToolnexusModuleError);
    await expect(
      Test.createTestingModule({ imports: [ToolnexusModule.forRootAsync({ useFactory: () => undefined as never })] }).compile(),
    ).rejects.toThrow('ToolnexusModule options must be an object, got undefined');
  });

  it('fails the boot with the coordinator’s own error for a bad lease', async () => {
    await expect(Test.createTestingModule({ imports: [ToolnexusModule.forRoot({ leaseMs: -1 })] }).compile()).rejects.toThrow(
      'leaseMs must be a positive number of milliseconds, got -1',
    );
  });
});
