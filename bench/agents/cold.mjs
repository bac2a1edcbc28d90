// One fresh process, one framework: time to import it, time to set it up and answer the
// first request, then COLD_REQUESTS more requests, and the process's peak RSS.
// No static imports here, so "import" is the framework's import alone, not the harness's.
// Usage: node cold.mjs <adapter-file> <mock-base-url> <requests-after-first>
const started = performance.now();
const [file, baseUrl, more] = process.argv.slice(2);
const { pathToFileURL } = await import('node:url');
const c0 = process.cpuUsage();
const t0 = performance.now();
const { create } = await import(pathToFileURL(file).href);
const t1 = performance.now();
const c1 = process.cpuUsage();
const ask = await create(baseUrl);
const firstText = await ask();
const t2 = performance.now();
const c2 = process.cpuUsage();
let lastText = firstText;
for (let i = 0; i < Number(more); i++) lastText = await ask();
const usage = process.resourceUsage();
process.stdout.write(
  JSON.stringify({
    bootMs: started,
    importMs: t1 - t0,
    firstRequestMs: t2 - t1,
    // CPU time (all threads, user + system) of the same two steps: steadier than wall
    // time when other work shares the cores.
    importCpuMs: cpuMs(c0, c1),
    firstRequestCpuMs: cpuMs(c1, c2),
    peakRssMB: usage.maxRSS / 1024,
    heapUsedMB: process.memoryUsage().heapUsed / 1048576,
    firstText,
    lastText,
  }) + '\n',
);

function cpuMs(from, to) {
  return (to.user - from.user + to.system - from.system) / 1000;
}
