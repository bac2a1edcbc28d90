// Every row of the benchmark: its adapter file (each exports `create(baseUrl)` → `ask()`),
// its role in the ratios, and the package versions it measures.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (file) => fileURLToPath(new URL(`./frameworks/${file}`, import.meta.url));

export const FRAMEWORKS = [
  // THE floor: the fastest hand-written loop, over node:http with a keep-alive agent (the
  // transport the library defaults to). The bare-fetch floor is kept as a second row.
  { key: 'floor', label: 'floor over node:http', role: 'floor', file: here('floor-http.mjs') },
  { key: 'floor-fetch', label: 'floor (bare fetch)', role: 'diagnostic', file: here('floor.mjs') },
  { key: 'floor-validated', label: 'floor over node:http, class-validator checks', role: 'diagnostic', file: here('floor-validated.js') },
  { key: 'toolnexus', label: 'toolnexus-ts AgentRunner', role: 'self', file: here('toolnexus.js') },
  { key: 'toolnexus-fetch', label: 'toolnexus-ts AgentRunner over fetch', role: 'diagnostic', file: here('toolnexus-fetch.js') },
  { key: 'toolnexus-model', label: 'toolnexus-ts model + Toolkit, hand loop', role: 'diagnostic', file: here('toolnexus-model.js') },
  { key: 'toolnexus-toolkit', label: 'toolnexus-ts Toolkit, hand loop', role: 'diagnostic', file: here('toolnexus-toolkit.js') },
  { key: 'vercel-ai', label: 'Vercel AI SDK', role: 'peer', file: here('vercel-ai.mjs') },
  { key: 'openai-agents', label: 'OpenAI Agents SDK', role: 'peer', file: here('openai-agents.mjs') },
  { key: 'mastra', label: 'Mastra', role: 'peer', file: here('mastra.mjs') },
  { key: 'langchain', label: 'LangChain.js', role: 'peer', file: here('langchain.mjs') },
];

/** The rows whose adapter exists (the TypeScript ones exist once compiled). */
export function available(keys) {
  return FRAMEWORKS.filter((f) => (!keys || keys.includes(f.key)) && existsSync(f.file));
}
