#!/usr/bin/env node
// Renders OTLP/HTTP JSON trace exports as an HTML waterfall (one section per trace, spans
// nested by parent, span links drawn as labelled references), for docs/observability.md
// where no Jaeger is at hand. With --png, screenshots it with the Chromium the browser tests
// use (scripts/chromium.js: the machine's own, else the one the @sparticuz/chromium devDependency ships).
//
//   node scripts/trace-waterfall.js EXPORTS.json OUT.html [--png OUT.png]
//
// EXPORTS.json is a JSON array of OTLP export request bodies, as a receiver got them (the
// cross-process test writes one when TOOLNEXUS_TRACE_OUT names a file).
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

function plainValue(value) {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return (value.arrayValue.values || []).map(plainValue);
  return '';
}
const attributes = (list) => Object.fromEntries((list || []).map((kv) => [kv.key, plainValue(kv.value)]));

function spansOf(requests) {
  const spans = [];
  for (const request of requests)
    for (const rs of request.resourceSpans || []) {
      const service = String(attributes(rs.resource && rs.resource.attributes)['service.name']);
      for (const ss of rs.scopeSpans || [])
        for (const s of ss.spans || [])
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parent: s.parentSpanId || undefined,
            name: s.name,
            kind: ['', 'internal', 'server', 'client', 'producer', 'consumer'][s.kind] || '',
            service,
            start: BigInt(s.startTimeUnixNano),
            end: BigInt(s.endTimeUnixNano),
            attributes: attributes(s.attributes),
            links: (s.links || []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            error: s.status && s.status.code === 2,
          });
    }
  return spans;
}

const esc = (text) => String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const SHOWN = [
  'gen_ai.conversation.id',
  'toolnexus.run.status',
  'toolnexus.request.kind',
  'toolnexus.request.id',
  'toolnexus.suspension.status',
  'gen_ai.tool.call.id',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'mcp.session.id',
];

function render(spans) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const linked = new Map(); // spanId of a link target -> label
  for (const s of spans) for (const l of s.links) if (!linked.has(l.spanId)) linked.set(l.spanId, `L${linked.size + 1}`);
  const traces = [...new Set(spans.map((s) => s.traceId))].sort((a, b) =>
    Number(spans.find((s) => s.traceId === a).start - spans.find((s) => s.traceId === b).start),
  );
  const services = [...new Set(spans.map((s) => s.service))];
  const colours = ['#3b82f6', '#f59e0b', '#10b981', '#a855f7'];
  const colour = (service) => colours[services.indexOf(service) % colours.length];
  let html = '';
  for (const traceId of traces) {
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const t0 = inTrace.reduce((m, s) => (s.start < m ? s.start : m), inTrace[0].start);
    const t1 = inTrace.reduce((m, s) => (s.end > m ? s.end : m), inTrace[0].end);
    const width = Number(t1 - t0) || 1;
    const rows = [];
    const walk = (span, depth) => {
      rows.push([span, depth]);
      inTrace
        .filter((c) => c.parent === span.spanId)
        .sort((a, b) => Number(a.start - b.start))
        .forEach((c) => walk(c, depth + 1));
    };
    inTrace
      .filter((s) => !s.parent || !byId.has(s.parent))
      .sort((a, b) => Number(a.start - b.start))
      .forEach((r) => walk(r, 0));
    html += `<section><h2>trace <code>${traceId}</code> <span class="svc">${esc([...new Set(inTrace.map((s) => s.service))].join(', '))}</span> <span class="dur">${(width / 1e6).toFixed(1)} ms</span></h2><table>`;
    for (const [span, depth] of rows) {
      const left = (Number(span.start - t0) / width) * 100;
      const w = Math.max((Number(span.end - span.start) / width) * 100, 0.4);
      const target = linked.get(span.spanId);
      const links = span.links
        .map((l) => {
          const to = byId.get(l.spanId);
          return `<span class="link">↪ ${linked.get(l.spanId)} link to <b>${esc(to ? to.name : l.spanId)}</b> in ${esc(to ? to.service : 'trace ' + l.traceId.slice(0, 8))} (trace ${l.traceId.slice(0, 8)}…)</span>`;
        })
        .join('');
      const attrs = SHOWN.filter((k) => span.attributes[k] !== undefined)
        .map((k) => `<span class="attr">${esc(k)}=${esc(span.attributes[k])}</span>`)
        .join(' ');
      html += `<tr><td class="name" style="padding-left:${8 + depth * 18}px"><span class="dot" style="background:${colour(span.service)}"></span>${esc(span.name)} <span class="kind">${span.kind}</span>${target ? ` <span class="target">${target}</span>` : ''}${span.error ? ' <span class="err">error</span>' : ''}<div class="attrs">${attrs}</div>${links}</td><td class="bar"><div style="margin-left:${left}%;width:${w}%;background:${colour(span.service)}"></div><span class="ms">${(Number(span.end - span.start) / 1e6).toFixed(1)} ms</span></td></tr>`;
    }
    html += '</table></section>';
  }
  const legend = services.map((s) => `<span><span class="dot" style="background:${colour(s)}"></span>${esc(s)}</span>`).join(' ');
  return `<!doctype html><meta charset="utf-8"><title>trace waterfall</title><style>
body{font:13px system-ui,sans-serif;margin:16px;color:#111}h1{font-size:16px;margin:0 0 6px}h2{font-size:13px;margin:14px 0 4px;font-weight:600}
code{font-size:12px}.svc{color:#555;font-weight:400}.dur{color:#777;font-weight:400;float:right}table{width:100%;border-collapse:collapse}
tr{border-top:1px solid #eee}td{vertical-align:top;padding:3px 6px}td.name{width:52%}td.bar{position:relative}
td.bar div{height:12px;border-radius:2px;margin-top:3px}.ms{font-size:11px;color:#666}.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px}
.kind{font-size:10px;color:#777;text-transform:uppercase}.attrs{font-size:11px;color:#555;margin-left:15px}.attr{margin-right:8px}
.link{display:block;margin:2px 0 0 15px;font-size:11.5px;color:#b45309;background:#fffbeb;border:1px solid #fcd34d;border-radius:3px;padding:1px 5px;width:fit-content}
.target{font-size:10.5px;color:#fff;background:#b45309;border-radius:3px;padding:0 4px}.err{color:#fff;background:#dc2626;border-radius:3px;padding:0 4px;font-size:10px}
.legend span{margin-right:14px}</style>
<h1>A run halted in one process and resumed in another</h1><div class="legend">${legend}</div>${html}`;
}

async function main() {
  const [input, output, flag, png] = process.argv.slice(2);
  if (!input || !output || (flag !== undefined && (flag !== '--png' || !png))) {
    console.error('usage: node scripts/trace-waterfall.js EXPORTS.json OUT.html [--png OUT.png]');
    process.exit(2);
  }
  writeFileSync(output, render(spansOf(JSON.parse(readFileSync(input, 'utf8')))));
  if (!png) return;
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({
    executablePath: require('./chromium.js').resolveChromium().path,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    await page.goto(`file://${path.resolve(output)}`);
    await page.screenshot({ path: png, fullPage: true });
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
