/**
 * `npm start`: the whole story in one run, no network, nothing to configure.
 *   1. the Toolkit: class tools, their schema, validation, a deadline;
 *   2. a durable approval: suspended in SQLite, resolved by a second coordinator;
 *   3. an agent run that halts on an approval and is resumed by a fresh process.
 */
import { main as durableApproval } from './durable-approval';
import { main as payInvoice } from './pay-invoice';
import { main as toolkitBasics } from './toolkit-basics';

const parts: Array<[string, () => Promise<void>]> = [
  ['Tools, schemas and dispatch', toolkitBasics],
  ['A suspended call, kept in SQLite and replayed exactly once', durableApproval],
  ['An agent that halts for approval and resumes in another process', payInvoice],
];

async function demo(): Promise<void> {
  for (const [index, [title, run]] of parts.entries()) {
    console.log(`\n${'═'.repeat(78)}\n  Part ${index + 1} of ${parts.length}: ${title}\n${'═'.repeat(78)}`);
    await run();
  }
  console.log(`\n${'═'.repeat(78)}`);
  console.log('  Answer suspensions in a browser: the approvals inbox (docs/operating.md).');
  console.log('    npm run inbox                                   a demo inbox with two waiting runs');
  console.log('    npx toolnexus-ts serve --store sqlite:./app.db   the inbox for your own store');
}

demo().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
