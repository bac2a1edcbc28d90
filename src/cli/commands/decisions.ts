import { exportDecisions, type ExportDecisionsOptions } from '../../decisions/export';
import { isDecisionFormat, type DecisionFormat } from '../../decisions/formats';
import { policyReport, type PolicyReport } from '../../decisions/report';
import { InvalidArgumentError } from '../../errors';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';
import { table } from '../format';
import { CliProblem } from '../target';

/** The window and tools both `decisions` commands read. */
const WINDOW_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  tool: { type: 'string', multiple: true },
} as const;

/** `--since`, `--until` and `--tool` as exportDecisions takes them; a missing `--since` is a usage error. */
function windowOf(values: Record<string, unknown>): Pick<ExportDecisionsOptions, 'since' | 'until' | 'tools'> {
  if (typeof values.since !== 'string')
    throw new CliProblem('--since is required: an RFC 3339 instant, e.g. 2026-11-01T00:00:00Z', EXIT.usage);
  const tools = values.tool as string[] | undefined;
  return {
    since: values.since,
    ...(typeof values.until === 'string' ? { until: values.until } : {}),
    ...(tools === undefined ? {} : { tools }),
  };
}

/** Runs `work`, reporting exportDecisions' refusal of an option as a usage error. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new CliProblem(error.message, EXIT.usage);
    throw error;
  }
}

/** `decisions export`: settled requests as JSONL evaluation data on stdout (docs/operating.md, "Decisions as evaluation data"). */
export const decisionsExport = storeCommand({
  path: ['decisions', 'export'],
  summary: 'settled requests as evaluation data, one JSON line each (redacted)',
  usage: '--since T [--until T] [--tool T]... [--format toolnexus|evalite|langsmith|braintrust]',
  options: { ...WINDOW_OPTIONS, format: { type: 'string' } },
  async run({ values, io, open }) {
    const window = windowOf(values);
    const format = values.format ?? 'toolnexus';
    if (!isDecisionFormat(format))
      throw new CliProblem(`--format must be toolnexus, evalite, langsmith or braintrust; got ${String(format)}`, EXIT.usage);
    const session = await open();
    // Without --tools the toolkit knows no tool, so every call's arguments are redacted whole.
    const rows = await asUsage(async () =>
      exportDecisions<DecisionFormat>(session.store, { ...window, format, toolkit: session.coordinator.toolkit }),
    );
    await asUsage(async () => {
      for await (const row of rows) {
        io.out(JSON.stringify(row));
        // A slow reader (a pipe to an upload) holds the export back rather than the rows piling up here.
        await io.drained?.();
      }
    });
    return EXIT.ok;
  },
});

/** `decisions report`: a shadow automatic-answer rule against the people's answers. */
export const decisionsReport = storeCommand({
  path: ['decisions', 'report'],
  summary: "a shadow automaticAnswers rule's decisions against the people's answers",
  usage: '--policy NAME --since T [--until T] [--tool T]...',
  options: { ...WINDOW_OPTIONS, policy: { type: 'string' } },
  async run({ values, io, open }) {
    if (typeof values.policy !== 'string' || values.policy === '') throw new CliProblem('--policy NAME is required', EXIT.usage);
    const window = windowOf(values);
    const session = await open();
    const report = await asUsage(() => policyReport(session.store, { ...window, policy: values.policy as string }));
    io.out(values.json ? JSON.stringify(report) : reportText(report));
    return EXIT.ok;
  },
});

/** The confusion table: a row per decision of the rule, a column per answer of the person. */
export function reportText(report: PolicyReport): string {
  const answers = ['approved', 'edited', 'declined', 'expired', 'cancelled'] as const;
  const agreement = report.agreement === undefined ? 'no request both decided' : `${(report.agreement * 100).toFixed(1)}% agreement`;
  const head = `policy ${report.policy}: ${report.total} shadowed request(s); agreed ${report.agreed}, disagreed ${report.disagreed} (${agreement})`;
  const rows = (Object.keys(report.table) as Array<keyof PolicyReport['table']>).map((rule) => [
    rule,
    ...answers.map((answer) => String(report.table[rule][answer])),
  ]);
  return `${head}\n\n${table(['RULE \\ PERSON', ...answers.map((a) => a.toUpperCase())], rows, [16, 9, 9, 9, 9, 9])}`;
}
