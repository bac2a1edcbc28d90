// One fresh process, one framework: time to import it, time to set it up and answer the
// first request, then COLD_REQUESTS more requests, and the process's peak RSS.
// No static imports here, so "import" is the framework's import alone, not the harness's.
// Usage: node cold.mjs <adapter-file> <mock-base-url> <requests-after-first>
const started = performance.now();
const [file, baseUrl, more] = process.argv.slice(2);
const { pathToFileURL } = await import('node:url');
const t0 = performance.now();
const { create } = await import(pathToFileURL(file).href);
const t1 = performance.now();
const ask = await create(baseUrl);
const firstText = await ask();
const t2 = performance.now();
let lastText = firstText;
for (let i = 0; i < Number(more); i++) lastText = await ask();
const usage = process.resourceUsage();
process.stdout.write(
  JSON.stringify({
    bootMs: started,
    importMs: t1 - t0,
    firstRequestMs: t2 - t1,
    peakRssMB: usage.maxRSS / 1024,
    heapUsedMB: process.memoryUsage().heapUsed / 1048576,
    firstText,
    lastText,
  }) + '\n',
);
