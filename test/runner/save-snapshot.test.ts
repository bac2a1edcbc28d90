/**
 * What a run store is handed is the run as it stood when `saveRun` was called, never the live
 * run data: a store that copies only after its first `await` (a pooled connection, a logging
 * wrapper) must not save a durable step together with results already fed to the transcript,
 * or `recover` feeds a tool result to the model twice (issue 32, item 12).
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Tool, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator, StoreError } from 'toolnexus-ts/suspension';
import { FunctionModel, type ChatMessage } from 'toolnexus-ts/models';
import { AgentRunner, type RunCheckpoint, type RunStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FakeClock } from '../fixtures/fake-clock';

class NoteArgs {
  @IsString() text!: string;
}

@Tool({ name: 'note', description: 'Writes a note', args: NoteArgs })
class NoteTool {
  runs = 0;
  run(args: NoteArgs) {
    this.runs++;
    return success({ noted: args.text });
  }
}

const LEASE_MS = 30_000;

/**
 * A run store that waits a turn of the event loop before it copies what it was given, as a
 * store waiting for a pooled connection does. It records the checkpoint as it stood when
 * `saveRun` was called and as it was when copied; `onSave` runs as each save is called;
 * after `die()`, every save fails (the process lost its store, then died).
 */
class SlowCopyStore implements RunStore {
  readonly asCalled: string[] = [];
  readonly asCopied: string[] = [];
  dead = false;
  onSave: (checkpoint: RunCheckpoint) => void = () => undefined;

  constructor(readonly inner: MemoryStore) {}

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    this.asCalled.push(JSON.stringify(checkpoint));
    this.onSave(checkpoint);
    await new Promise(setImmediate);
    if (this.dead) throw new StoreError('the store is gone');
    this.asCopied.push(JSON.stringify(checkpoint));
    return this.inner.saveRun(JSON.parse(JSON.stringify(checkpoint)) as RunCheckpoint);
  }

  loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    return this.inner.loadRun(runId);
  }
}

function runner(model: FunctionModel, store: MemoryStore, runs: RunStore, clock: FakeClock, tool = new NoteTool()) {
  const toolkit = new Toolkit().register(tool);
  return new AgentRunner({
    model,
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store }),
    runs,
    durability: 'step',
    runLeaseMs: LEASE_MS,
    clock,
  });
}

/** Tool results per call id in what a model request carried: more than one is a result fed twice. */
function toolResultsPerCall(messages: readonly ChatMessage[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of messages) if (message.role === 'tool') counts.set(message.callId, (counts.get(message.callId) ?? 0) + 1);
  return counts;
}

it('hands a store the checkpoint as it stood at the call, so a recovered run never feeds a result twice', async () => {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const slow = new SlowCopyStore(store);
  let renewalFired = false;
  slow.onSave = (checkpoint) => {
    const step = checkpoint.state.step as { calls: Array<{ result?: unknown }> } | undefined;
    // The call's result is being saved: the lease renews now, so its write queues behind this one
    // and is taken while the turn's results are fed to the transcript.
    if (!renewalFired && step?.calls.every((call) => call.result !== undefined)) {
      renewalFired = true;
      clock.advance(LEASE_MS / 3 + 1);
    } else if (renewalFired) {
      // After the renewal's write, the process dies: nothing later reaches the store.
      slow.dead = slow.asCalled.length > 5;
    }
  };
  const first = runner(
    new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'noted' : { toolCalls: [{ id: 'call_1', name: 'note', arguments: { text: 'hi' } }] },
    ),
    store,
    slow,
    clock,
  );
  await expect(first.run('note hi', { runId: 'r-slow' })).rejects.toThrow();
  expect(renewalFired).toBe(true);
  // Every checkpoint the store kept is the run as it stood when saveRun was called.
  expect(slow.asCopied).toEqual(slow.asCalled.slice(0, slow.asCopied.length));

  const requests: ChatMessage[][] = [];
  const tool = new NoteTool();
  const recovering = runner(
    new FunctionModel(({ messages }) => {
      requests.push([...messages]);
      return 'noted';
    }),
    store,
    store,
    clock,
    tool,
  );
  clock.advance(LEASE_MS + 1);
  const recovered = await recovering.recover('r-slow');
  expect(recovered.status).toBe('done');
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) for (const count of toolResultsPerCall(request).values()) expect(count).toBe(1);
  expect(recovered.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
});
