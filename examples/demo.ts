/**
 * `npm start`: the whole story in one run, no network, nothing to configure.
 */
import { main as toolkitBasics } from './toolkit-basics';

async function demo(): Promise<void> {
  console.log('toolnexus-ts demo');
  await toolkitBasics();
}

demo().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
