// The one scenario every framework runs: the same prompt, system prompt, two tools with
// the same names, descriptions and argument shapes, and the same tool bodies.
export const PROMPT = 'What is the weather in Paris, and what is 2 + 3?';
export const SYSTEM_PROMPT = 'You are a helpful assistant. Use the tools.';
export const MODEL = 'mock-gpt';
export const API_KEY = 'sk-mock-not-a-real-key';
export { FINAL_TEXT } from './mock-server.mjs';

export const WEATHER = { name: 'get_weather', description: 'Current weather for a city', city: 'City name, e.g. Paris' };
export const ADD = { name: 'add', description: 'Add two numbers', a: 'First addend', b: 'Second addend' };

/** How many times each tool body ran: the harness checks both run once per request. */
export const toolRuns = { get_weather: 0, add: 0 };

export function getWeather({ city }) {
  toolRuns.get_weather++;
  return { city, tempC: 21, conditions: 'sunny' };
}

export function add({ a, b }) {
  toolRuns.add++;
  return a + b;
}
