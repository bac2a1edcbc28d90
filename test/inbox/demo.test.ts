/** `npm run inbox` (examples/inbox-demo/serve.ts): the demo inbox, with its two waiting runs, over real HTTP. */
import { startDemoInbox } from '../../examples/inbox-demo/serve';

describe('the demo inbox', () => {
  it('serves two halted runs on 127.0.0.1; approving the transfer finishes its run', async () => {
    const demo = await startDemoInbox();
    try {
      expect(demo.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/inbox\/$/);
      const auth = { authorization: `Bearer ${demo.token}` };
      expect((await fetch(`${demo.url}api/suspensions`)).status).toBe(401);
      const listed = (await (await fetch(`${demo.url}api/suspensions`, { headers: auth })).json()) as {
        suspensions: Array<{ id: string; kind: string; prompt: string; runId: string }>;
      };
      expect(listed.suspensions.map((s) => s.kind).sort()).toEqual(['approval', 'input']);
      const transfer = listed.suspensions.find((s) => s.kind === 'approval');
      expect(transfer?.prompt).toBe('Transfer 2500.00 EUR from acc-ops to [redacted]?');
      const answered = await fetch(`${demo.url}api/suspensions/${transfer?.id}/answer`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
      expect(((await answered.json()) as { run: unknown }).run).toEqual({
        runId: transfer?.runId,
        status: 'done',
        text: 'Done: moved 250000 cents from acc-ops',
      });
    } finally {
      await demo.close();
    }
  });
});
