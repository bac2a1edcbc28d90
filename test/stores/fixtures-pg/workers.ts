/** Starts fixtures-pg/worker.ts processes and talks to them over IPC. */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { ParentMessage, WorkerConfig, WorkerMessage } from './worker';

const REGISTER = join(__dirname, '..', '..', 'fixtures', 'register-ts.js');
const WORKER = join(__dirname, 'worker.ts');

export interface WorkerHandle {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the first message of this type (already received or still to come). */
  next<T extends WorkerMessage['type']>(type: T, timeoutMs?: number): Promise<Extract<WorkerMessage, { type: T }>>;
  go(ids: string[]): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Compiles the worker's sources once into register-ts.js's cache, so eight workers then start in well under a second each. */
export async function warmUpWorkers(): Promise<void> {
  await promisify(execFile)(process.execPath, ['-r', REGISTER, '-e', `require(${JSON.stringify(WORKER)})`], { timeout: 60_000 });
}

export function startWorker(config: WorkerConfig): WorkerHandle {
  const child = fork(WORKER, [JSON.stringify(config)], { execArgv: ['-r', REGISTER], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  const received: WorkerMessage[] = [];
  const waiters: Array<() => void> = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.on('message', (message: WorkerMessage) => {
    received.push(message);
    waiters.splice(0).forEach((wake) => wake());
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => {
      waiters.splice(0).forEach((wake) => wake());
      resolve({ code, signal, stderr });
    }),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  async function next<T extends WorkerMessage['type']>(type: T, timeoutMs = 60_000): Promise<Extract<WorkerMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const failed = received.find((m) => m.type === 'failed');
      if (failed && type !== 'failed') throw new Error(`worker ${child.pid} failed: ${(failed as { error: string }).error}`);
      const found = received.find((m) => m.type === type);
      if (found) return found as Extract<WorkerMessage, { type: T }>;
      if (gone) throw new Error(`worker ${child.pid} exited before sending ${type}: ${stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`worker ${child.pid} sent no ${type} within ${timeoutMs} ms: ${stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  return {
    child,
    pid: child.pid as number,
    next,
    go: (ids) => child.send({ type: 'go', ids } satisfies ParentMessage),
    exited,
  };
}
