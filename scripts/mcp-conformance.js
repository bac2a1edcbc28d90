#!/usr/bin/env node
/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against this
 * library, offline on 127.0.0.1:
 *
 *   server  examples/mcp/conformance-server.ts (@Tool classes served by serveMcp over
 *           Streamable HTTP), the scenarios each revision requires (`--requirements`), once
 *           at each wire version: 2025-11-25 (sessions) and 2026-07-28 (stateless, MRTR);
 *   client  examples/mcp/conformance-client.ts (an McpToolSource) in every client scenario the
 *           requirements of 2025-11-25 and of 2026-07-28 list (scored or not), each at its revision.
 *
 * Expected failures are in .ci/mcp-conformance-baseline.yml, each with its reason; the suite
 * itself fails the run on a regression or on a stale entry. The server scenarios a revision
 * runs without scoring (the tasks extension, the suite's pending ones) never fail the suite's
 * run, so this script holds them to the same rule: each passes unless the baseline's `server`
 * list names it, and a listed one that passes is stale. Prints the score. Needs the compiled
 * examples (npm run build:examples). Run: node scripts/mcp-conformance.js
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const CLI = require.resolve('@modelcontextprotocol/conformance/dist/index.js', { paths: [ROOT] });
const BASELINE = path.join(ROOT, '.ci', 'mcp-conformance-baseline.yml');
const SERVER = path.join(ROOT, 'dist-examples', 'examples', 'mcp', 'conformance-server.js');
const CLIENT = path.join(ROOT, 'dist-examples', 'examples', 'mcp', 'conformance-client.js');
// The client is run in every scenario each revision requires, and in those it runs without
// scoring (extensions, scenarios added after the revision shipped), one scenario at a time at that
// revision's wire version: the frozen lists of the suite's requirements files.
const REVISIONS = ['2025-11-25', '2026-07-28'];
const REQUIREMENTS = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json', { paths: [ROOT] })),
  'requirements',
);

/** The client scenarios of a revision: required ones, then the ones it runs without scoring. */
function clientScenarios(revision) {
  const { parse } = require('yaml');
  const document = parse(fs.readFileSync(path.join(REQUIREMENTS, `${revision}.yaml`), 'utf8'));
  const unscored = (document.not_scored ?? []).filter((entry) => entry.leg === 'client').map((entry) => entry.scenario);
  return [...(document.client ?? []), ...unscored];
}

/** The server scenarios a revision runs without scoring (`not_scored`, leg `server`). */
function unscoredServerScenarios(revision) {
  const { parse } = require('yaml');
  const document = parse(fs.readFileSync(path.join(REQUIREMENTS, `${revision}.yaml`), 'utf8'));
  return (document.not_scored ?? []).filter((entry) => entry.leg === 'server').map((entry) => entry.scenario);
}

/** Whether a result folder (`server-<scenario>-<timestamp>`) holds `scenario`'s results. */
function isResultOf(folder, scenario) {
  return folder.startsWith(`server-${scenario}-`) && /^\d{4}-\d{2}-\d{2}T/.test(folder.slice(`server-${scenario}-`.length));
}

/**
 * What the suite does not check of the unscored server scenarios: a failure the baseline does
 * not expect (a regression), or an entry for one that passes (stale). One line each.
 */
function unscoredProblems(revision, outcomes) {
  const { parse } = require('yaml');
  const expected = new Set((parse(fs.readFileSync(BASELINE, 'utf8')) ?? {}).server ?? []);
  const problems = [];
  for (const scenario of unscoredServerScenarios(revision)) {
    const outcome = outcomes.find((item) => isResultOf(item.name, scenario));
    if (!outcome) problems.push(`${scenario}: not run (no results)`);
    else if (!outcome.ok && !expected.has(scenario)) problems.push(`${scenario}: fails, and the baseline does not expect it`);
    else if (outcome.ok && expected.has(scenario)) problems.push(`${scenario}: passes, but the baseline still lists it (stale)`);
  }
  return problems;
}

/** The baseline's client entries for a revision (those of every revision, and its own), as a file of their own. */
function clientBaseline(revision, scratch) {
  const { parse, stringify } = require('yaml');
  const document = parse(fs.readFileSync(BASELINE, 'utf8')) ?? {};
  const file = path.join(scratch, `client-baseline-${revision}.yml`);
  fs.writeFileSync(file, stringify({ client: [...(document.client ?? []), ...(document[`client-${revision}`] ?? [])] }));
  return file;
}
// The Node 20 shim for the suite's bundle (scripts/conformance-node20.mjs says why).
const NODE_ARGS = ['--import', path.join(__dirname, 'conformance-node20.mjs')];
const SCENARIO_TIMEOUT_MS = 120_000;

/** Runs the conformance CLI; resolves to its exit code and output. */
function conformance(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...NODE_ARGS, CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCENARIO_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

/** Starts the example server and resolves to its URL (its first line of output). */
function startServer() {
  const child = spawn(process.execPath, [SERVER], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error('the conformance server printed no URL within 20 s')), 20_000);
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const line = seen.split('\n')[0];
      if (seen.includes('\n')) {
        clearTimeout(timer);
        resolve({ child, url: line.trim() });
      }
    });
    child.on('exit', (code) => reject(new Error(`the conformance server exited (${code}) before printing its URL`)));
  });
}

/** Scenario outcomes from the suite's result folders: a scenario passes when none of its checks failed. */
function score(dir) {
  const scenarios = [];
  let checks = 0;
  let failedChecks = 0;
  let warnings = 0;
  // A scenario named `auth/…` has its results one folder down, in `auth/`.
  const folders = fs
    .readdirSync(dir)
    .flatMap((name) =>
      fs.existsSync(path.join(dir, name, 'checks.json'))
        ? [name]
        : fs.readdirSync(path.join(dir, name)).map((inner) => path.join(name, inner)),
    );
  for (const name of folders.sort()) {
    const file = path.join(dir, name, 'checks.json');
    if (!fs.existsSync(file)) continue;
    const list = JSON.parse(fs.readFileSync(file, 'utf8'));
    const failures = list.filter((check) => check.status === 'FAILURE').length;
    checks += list.filter((check) => check.status !== 'INFO').length;
    failedChecks += failures;
    warnings += list.filter((check) => check.status === 'WARNING').length;
    scenarios.push({ name, ok: failures === 0 });
  }
  return { scenarios, checks, failedChecks, warnings };
}

function summaryOf(output) {
  const at = output.indexOf('=== SUMMARY ===');
  return at >= 0 ? output.slice(at) : output.split('\n').slice(-8).join('\n');
}

async function main() {
  for (const file of [SERVER, CLIENT]) {
    if (!fs.existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run npm run build:examples first`);
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
  let failed = false;
  try {
    const started = Date.now();
    const { child, url } = await startServer();
    const servers = [];
    try {
      for (const revision of REVISIONS) {
        const run = await conformance([
          'server',
          '--url',
          url,
          '--requirements',
          revision,
          '--expected-failures',
          BASELINE,
          '-o',
          path.join(scratch, `server-${revision}`),
        ]);
        servers.push({ revision, ...run });
        console.log(`== server at ${revision}`);
        console.log(summaryOf(run.output).trimEnd());
        if (run.code !== 0) {
          failed = true;
          console.error(run.output);
          console.error(`MCP conformance (server, ${revision}): a regression or a stale baseline entry, see above`);
        }
        const problems = unscoredProblems(revision, score(path.join(scratch, `server-${revision}`)).scenarios);
        for (const problem of problems) console.error(`MCP conformance (server, ${revision}, not scored): ${problem}`);
        if (problems.length > 0) failed = true;
      }
    } finally {
      child.kill('SIGTERM');
    }
    const clientCounts = [];
    for (const revision of REVISIONS) {
      const baseline = clientBaseline(revision, scratch);
      const out = path.join(scratch, `client-${revision}`);
      for (const scenario of clientScenarios(revision)) {
        const run = await conformance([
          'client',
          '--command',
          `"${process.execPath}" "${CLIENT}"`,
          '--scenario',
          scenario,
          '--spec-version',
          revision,
          // Extension scenarios sit outside the spec's timeline: run at the revision all the same.
          '--force',
          '--expected-failures',
          baseline,
          '-o',
          out,
        ]);
        console.log(`${run.code === 0 ? 'ok  ' : 'FAIL'} client scenario ${scenario} at ${revision}`);
        if (run.code !== 0) {
          failed = true;
          console.error(run.output);
        }
      }
      clientCounts.push({ revision, ...score(out) });
    }
    const pass = (list) => list.filter((item) => item.ok).length;
    for (const { revision } of servers) {
      const s = score(path.join(scratch, `server-${revision}`));
      const unscored = new Set(unscoredServerScenarios(revision));
      const extra = s.scenarios.filter((item) => [...unscored].some((name) => isResultOf(item.name, name)));
      console.log(
        `MCP conformance score: server at ${revision}: ${pass(s.scenarios)} of ${s.scenarios.length} scenarios ` +
          `(${s.checks - s.failedChecks} of ${s.checks} checks, ${s.warnings} warnings), of which not scored by the ` +
          `revision but held to the baseline here: ${pass(extra)} of ${extra.length}; the rest are the baseline's expected failures`,
      );
    }
    for (const c of clientCounts) {
      console.log(
        `MCP conformance score: client at ${c.revision}: ${pass(c.scenarios)} of ${c.scenarios.length} scenarios ` +
          `(${c.checks - c.failedChecks} of ${c.checks} checks)`,
      );
    }
    console.log(`MCP conformance: in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    if (!process.env.KEEP) fs.rmSync(scratch, { recursive: true, force: true });
    else console.log(`results kept in ${scratch}`);
  }
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
