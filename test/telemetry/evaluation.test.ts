/**
 * A person's answer to an approval as a GenAI evaluation (docs/observability.md, "Approvals as
 * evaluations"), with the real OpenTelemetry SDK: one `gen_ai.evaluation.result` event, name
 * `human_approval`, label approved / edited / declined and the comment as its explanation
 * (a sensitive value in it redacted), on a span whose parent is the tool's `execute_tool`
 * span that asked. No event for an automatic answer acting on its rule, nor for an expiry.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { pendingOf, type ToolResult } from 'toolnexus-ts';
import { MemorySuspensionStore, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { cardOf, toolkit as decisionTools } from '../fixtures/decisions';
import { startOtel, type Otel } from '../fixtures/telemetry/sdk';

let otel: Otel;
beforeEach(() => {
  otel = startOtel();
});
afterEach(() => otel.shutdown());

const EVENT = 'gen_ai.evaluation.result';

function setup(automatic?: ConstructorParameters<typeof ResumeCoordinator>[0]['automaticAnswers']) {
  const telemetry = { tracerProvider: otel.tracerProvider };
  // The fixture's tools, in a toolkit that traces: the card is @Sensitive.
  const traced = decisionTools({ telemetry });
  return new ResumeCoordinator({
    toolkit: traced,
    store: new MemorySuspensionStore(),
    telemetry,
    ...(automatic ? { automaticAnswers: automatic } : {}),
  });
}

/** The evaluation spans, each with its one event's attributes, and the tool span each hangs under. */
function evaluations(spans: readonly ReadableSpan[]) {
  return spans
    .filter((span) => span.events.some((event) => event.name === EVENT))
    .map((span) => ({
      span,
      attributes: span.events.find((event) => event.name === EVENT)!.attributes,
      parent: spans.find((candidate) => candidate.spanContext().spanId === span.parentSpanContext?.spanId),
    }));
}

async function asked(coordinator: ResumeCoordinator, tool: string, args: object, callId: string): Promise<string> {
  const result: ToolResult = await coordinator.execute(tool, args, undefined, { callId, runId: 'run-eval' });
  const request = pendingOf(result);
  if (!request) throw new Error(`${tool} did not ask: ${result.output}`);
  return request.id;
}

it('records approved, edited and declined, parented to the execute_tool span that asked, the comment redacted', async () => {
  const coordinator = setup();
  const card = cardOf(42);
  const args = { orderId: 'ord-42', card, cents: 900 };
  const approved = await asked(coordinator, 'refund', args, 'call-a');
  const edited = await asked(coordinator, 'refund', args, 'call-e');
  const declined = await asked(coordinator, 'refund', args, 'call-d');
  await coordinator.resolve({ id: approved, ok: true }, undefined, { by: { id: 'user:ann' }, comment: `fine for ${card}` });
  await coordinator.resolve({ id: edited, ok: true, args: { ...args, cents: 450 } }, undefined, {
    by: { id: 'user:ann' },
    comment: 'half',
  });
  await coordinator.resolve({ id: declined, ok: false }, undefined, { by: { id: 'user:ann' } });

  const spans = otel.spans();
  const found = evaluations(spans);
  expect(found.map(({ span, attributes }) => [span.name, attributes])).toEqual([
    [
      'evaluation human_approval',
      {
        'gen_ai.evaluation.name': 'human_approval',
        'gen_ai.evaluation.score.label': 'approved',
        'gen_ai.evaluation.explanation': 'fine for [redacted]',
      },
    ],
    [
      'evaluation human_approval',
      { 'gen_ai.evaluation.name': 'human_approval', 'gen_ai.evaluation.score.label': 'edited', 'gen_ai.evaluation.explanation': 'half' },
    ],
    ['evaluation human_approval', { 'gen_ai.evaluation.name': 'human_approval', 'gen_ai.evaluation.score.label': 'declined' }],
  ]);
  for (const [i, { span, parent }] of found.entries()) {
    // The parent is the execute_tool span of that very call (the one that suspended), in its trace.
    expect(parent?.name).toBe('execute_tool refund');
    expect(parent?.attributes['toolnexus.request.id']).toBe([approved, edited, declined][i]);
    expect(span.spanContext().traceId).toBe(parent?.spanContext().traceId);
    expect(span.attributes).toMatchObject({ 'gen_ai.tool.name': 'refund', 'gen_ai.tool.call.id': ['call-a', 'call-e', 'call-d'][i] });
  }
  expect(JSON.stringify(spans.map((span) => [span.attributes, span.events]))).not.toContain(card);
});

it('records nothing for an automatic answer acting on its rule, a standing grant, nor an expiry', async () => {
  const coordinator = setup({ name: 'auto-topup', decide: ({ tool }) => (tool === 'topup' ? 'approved' : 'not-applicable') });
  const result = await coordinator.execute('topup', { cents: 5 }, undefined, { callId: 'call-t', runId: 'run-eval' });
  expect(result).toEqual({ output: 'topped up 5', isError: false });
  await coordinator.grant({ by: { id: 'user:ann' }, tool: 'refund', scope: 'run', subject: 'run-eval' });
  const granted = await coordinator.execute('refund', { orderId: 'o', card: cardOf(1), cents: 5 }, undefined, {
    callId: 'call-g',
    runId: 'run-eval',
  });
  expect(granted).toEqual({ output: `refunded 5 to ${cardOf(1)}`, isError: false });
  const stale = await asked(coordinator, 'transfer', { cents: 5 }, 'call-x');
  const store = coordinator.store;
  const created = Date.parse((await store.get(stale))!.request.expiresAt!);
  while ((await store.now!()) <= created) await new Promise((resolve) => setImmediate(resolve));
  await coordinator.resolve({ id: stale, ok: true }, undefined, { by: { id: 'user:ann' } });
  expect((await store.get(stale))?.status).toBe('expired');
  expect(evaluations(otel.spans())).toEqual([]);
  // The resolutions were traced: telemetry was on.
  expect(otel.spans().some((span) => span.name === 'resolve_suspension transfer')).toBe(true);
});
