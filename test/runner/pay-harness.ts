/**
 * The test-process side of the durable-suspension tests: the scripted model server and a
 * way to resume a run in a fresh child process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Answer, RunResult } from 'toolnexus-ts';
import type { StoreSpec } from './fixtures/pay-agent';
import { openaiCalls, openaiText, type Reply } from './mock-servers';

const REGISTER = join(__dirname, '..', 'fixtures', 'register-ts.js');
const CHILD = join(__dirname, 'fixtures', 'resume-child.ts');

export type ChildOutput = { ok: true; pid: number; result: RunResult } | { ok: false; pid: number; error: { name: string; message: string } };

/** Resumes in a new `node` process that builds the agent from scratch over the same store. */
export function resumeInChild(where: StoreSpec, ledger: string, modelUrl: string, answers: Answer | Answer[]): Promise<ChildOutput> {
  const store = typeof where === 'string' ? where : JSON.stringify(where);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, CHILD, store, ledger, modelUrl, JSON.stringify(answers)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${String(code)}: ${stderr}`));
      else resolve(JSON.parse(stdout) as ChildOutput);
    });
  });
}

/** The child's output when its resume succeeded; a clear failure naming the error otherwise. */
export function succeeded(output: ChildOutput): Extract<ChildOutput, { ok: true }> {
  if (!output.ok) throw new Error(`resume in process ${output.pid} failed: ${output.error.name}: ${output.error.message}`);
  return output;
}

/** The model: first asks for one lookup and two payments at once; once it has the results, sums them up. */
export const payModel: Reply = (res, req, index) => {
  const messages = req.body.messages as Array<{ role: string; content: string | null }>;
  if (!messages.some((m) => m.role === 'tool')) {
    return openaiCalls(
      [
        { id: 'call_lookup', name: 'lookup_invoice', args: { invoice: 'inv-7' } },
        { id: 'call_pay_7', name: 'pay_invoice', args: { invoice: 'inv-7' } },
        { id: 'call_pay_8', name: 'pay_invoice', args: { invoice: 'inv-8' } },
      ],
      'Looking up and paying.',
    )(res, req, index);
  }
  const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
  return openaiText(`Done: ${results.join(' | ')}`)(res, req, index);
};
