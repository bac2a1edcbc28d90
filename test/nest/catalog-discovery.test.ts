/** ToolnexusModule discovers @Resource, @ResourceTemplate and @Prompt providers into its McpCatalog, injected like tools (docs/mcp.md). */
import 'reflect-metadata';
import { Injectable, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { McpCatalog, Prompt, Resource } from 'toolnexus-ts/mcp';
import { ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';

@Injectable()
class PolicyService {
  text(): string {
    return 'Refunds within 30 days.';
  }
}

@Injectable()
@Resource({ uri: 'app://policy', mimeType: 'text/plain' })
class PolicyResource {
  constructor(private readonly policies: PolicyService) {}
  read(): string {
    return this.policies.text();
  }
}

class AskArgs {
  @IsString()
  topic!: string;
}

@Injectable()
@Prompt({ description: 'Ask about the policy', args: AskArgs })
class AskPolicyPrompt {
  constructor(private readonly policies: PolicyService) {}
  get(args: AskArgs): string {
    return `About ${args.topic}: ${this.policies.text()}`;
  }
}

describe('ToolnexusModule catalog discovery', () => {
  it('registers catalog providers with their injected dependencies', async () => {
    const app = await Test.createTestingModule({
      imports: [ToolnexusModule.forRoot()],
      providers: [PolicyService, PolicyResource, AskPolicyPrompt],
    }).compile();
    await app.init();
    const catalog = app.get(McpCatalog);
    expect(catalog.resources()).toEqual([{ uri: 'app://policy', name: 'PolicyResource', mimeType: 'text/plain' }]);
    await expect(catalog.read('app://policy')).resolves.toEqual([
      { uri: 'app://policy', mimeType: 'text/plain', text: 'Refunds within 30 days.' },
    ]);
    await expect(catalog.getPrompt('ask_policy', { topic: 'shoes' })).resolves.toEqual({
      description: 'Ask about the policy',
      messages: [{ role: 'user', content: { type: 'text', text: 'About shoes: Refunds within 30 days.' } }],
    });
    await app.close();
  });

  it('refuses a request-scoped catalog provider, naming it', async () => {
    @Injectable({ scope: Scope.REQUEST })
    @Resource({ uri: 'app://per-request' })
    class PerRequestResource {
      read(): string {
        return '';
      }
    }
    const app = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [PerRequestResource] }).compile();
    await expect(app.init()).rejects.toThrow(
      new ToolnexusModuleError('catalog provider PerRequestResource must be a singleton (a resource or prompt is not per request)'),
    );
  });
});
