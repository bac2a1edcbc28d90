/**
 * MCP both ways in one process, ending by itself: a Toolkit of `@Tool` classes served over
 * Streamable HTTP with `serveMcp`, then used as tools of another Toolkit through
 * `McpToolSource`. The refund tool needs an approval: the server asks it through MCP
 * elicitation, the client side turns the elicitation into a `pending` request, and `waitFor`
 * (standing in for a person) approves it; the call then runs exactly once. See docs/mcp.md.
 *
 * Run: npm run build:examples && node dist-examples/examples/mcp/main.js
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, Toolkit, type ToolContext } from 'toolnexus-ts';
import { McpToolSource, serveMcp } from 'toolnexus-ts/mcp';

class WeatherArgs {
  @IsString()
  @Describe('City name')
  city!: string;
}

class Weather {
  @IsString()
  city!: string;

  @IsInt()
  celsius!: number;
}

@Tool({
  description: 'Current weather for a city',
  args: WeatherArgs,
  output: Weather,
  title: 'Weather',
  annotations: { readOnlyHint: true },
})
class GetWeatherTool {
  run(args: WeatherArgs, ctx?: ToolContext): Weather {
    ctx?.log?.('info', `looking up ${args.city}`);
    return { city: args.city, celsius: 21 };
  }
}

class RefundArgs {
  @IsString()
  customer!: string;

  @IsInt()
  @Min(1)
  cents!: number;
}

let refunds = 0;

@Tool({
  description: 'Refund a customer',
  args: RefundArgs,
  annotations: { destructiveHint: true },
  approval: { prompt: (args: RefundArgs) => `Refund ${args.cents} cents to ${args.customer}?` },
})
class RefundTool {
  run(args: RefundArgs): string {
    refunds++;
    return `refunded ${args.cents} cents to ${args.customer}`;
  }
}

async function main(): Promise<void> {
  const served = new Toolkit().register(GetWeatherTool, RefundTool);
  const server = await serveMcp(served, { transport: 'http', name: 'shop' });
  const source = new McpToolSource({
    config: { mcpServers: { shop: { url: server.url } } },
    waitFor: (request) => {
      console.log(`asked: ${request.prompt} -> approved`);
      return { id: request.id, ok: true };
    },
  });
  try {
    const report = await source.connect();
    console.log('connected:', JSON.stringify(report.connected));
    const toolkit = new Toolkit();
    source.register(toolkit);
    const weather = await toolkit.execute(
      'shop_get_weather',
      { city: 'Lyon' },
      { log: (level, message) => console.log(`log (${level}): ${message}`) },
    );
    console.log('weather:', weather.output);
    const refund = await toolkit.execute('shop_refund', { customer: 'ada', cents: 1200 });
    console.log('refund:', refund.output);
    if (weather.isError || refund.isError || refunds !== 1) throw new Error(`unexpected outcome (refunds run: ${refunds})`);
  } finally {
    await source.close();
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
