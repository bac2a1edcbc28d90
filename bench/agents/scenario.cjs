// The one scenario every framework runs: the same prompt, system prompt, two tools with
// the same names, descriptions and argument shapes, and the same tool bodies.
// CommonJS so that both the ESM adapters and the compiled TypeScript adapter can load it.
'use strict';

exports.PROMPT = 'What is the weather in Paris, and what is 2 + 3?';
exports.SYSTEM_PROMPT = 'You are a helpful assistant. Use the tools.';
exports.MODEL = 'mock-gpt';
exports.API_KEY = 'sk-mock-not-a-real-key';
/** What the mock answers once both tool results came back right. */
exports.FINAL_TEXT = 'It is 21°C and sunny in Paris, and 2 + 3 = 5.';

exports.WEATHER = { name: 'get_weather', description: 'Current weather for a city', city: 'City name, e.g. Paris' };
exports.ADD = { name: 'add', description: 'Add two numbers', a: 'First addend', b: 'Second addend' };

/** The two tools as the hand-written loops send them (OpenAI chat-completions `tools`). */
exports.OPENAI_TOOLS = [
  {
    type: 'function',
    function: {
      name: exports.WEATHER.name,
      description: exports.WEATHER.description,
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: exports.WEATHER.city } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: exports.ADD.name,
      description: exports.ADD.description,
      parameters: {
        type: 'object',
        properties: { a: { type: 'number', description: exports.ADD.a }, b: { type: 'number', description: exports.ADD.b } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
    },
  },
];

/** How many times each tool body ran: the harness checks both run once per request. */
const toolRuns = { get_weather: 0, add: 0 };
exports.toolRuns = toolRuns;

exports.getWeather = function getWeather({ city }) {
  toolRuns.get_weather++;
  return { city, tempC: 21, conditions: 'sunny' };
};

exports.add = function add({ a, b }) {
  toolRuns.add++;
  return a + b;
};
