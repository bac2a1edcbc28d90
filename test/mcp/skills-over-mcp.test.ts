/**
 * Skills over MCP (SEP-2640, docs/mcp.md "Skills over MCP"): serveMcp over Streamable HTTP on
 * 127.0.0.1 serving a real skills folder on disk, seen by the SDK's own v2 Client and its
 * SkillsClient at each revision, which verifies every file it reads against the digests.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { writeFile } from 'node:fs/promises';
import { Toolkit } from '../../src';
import { McpToolSource, serveMcp, type McpHttpServerHandle } from '../../src/mcp';
import { loadSkills, type Skills } from '../../src/skills';

const SKILL_MD = [
  '---',
  'name: refunds',
  'description: >',
  '  Process a customer refund',
  '  per company policy.',
  'license: Apache-2.0',
  'metadata:',
  '  version: "2.1"',
  '---',
  '',
  '# Refunds',
  '',
  'Read `references/POLICY.md`, then run `scripts/check.sh`.',
  '',
].join('\n');
const POLICY = '# Policy\n\nRefunds over 100 EUR need a manager.\n';
const SCRIPT = '#!/bin/sh\necho checked\n';

function skillsFolder(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'skills-over-mcp-'));
  const folder = path.join(root, 'refunds');
  mkdirSync(path.join(folder, 'references'), { recursive: true });
  mkdirSync(path.join(folder, 'scripts'), { recursive: true });
  writeFileSync(path.join(folder, 'SKILL.md'), SKILL_MD);
  writeFileSync(path.join(folder, 'references', 'POLICY.md'), POLICY);
  writeFileSync(path.join(folder, 'scripts', 'check.sh'), SCRIPT);
  // A skill whose name breaks the Agent Skills rules is kept by the skill tool but not published.
  mkdirSync(path.join(root, 'Odd'), { recursive: true });
  writeFileSync(path.join(root, 'Odd', 'SKILL.md'), '---\nname: Odd_Name\ndescription: odd\n---\nodd\n');
  return root;
}

const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

async function skillToolText(skills: Skills, args: Record<string, unknown>): Promise<string> {
  const result = await new Toolkit().register(skills.tool).execute('skill', args);
  return String(result.output);
}

describe.each(['2026-07-28', '2025-11-25'] as const)('Skills over MCP at %s, seen by the SDK v2 Client', (version) => {
  let server: McpHttpServerHandle;
  let skills: Skills;
  let client: Client;

  beforeAll(async () => {
    skills = loadSkills({ dirs: skillsFolder(), onWarning: () => undefined });
    server = await serveMcp(new Toolkit(), { transport: 'http', skills });
    client = new Client(
      { name: 'skills-test', version: '1.0.0' },
      { versionNegotiation: { mode: version === '2025-11-25' ? 'legacy' : { pin: version } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('declares the extension with the resources capability', () => {
    const capabilities = client.getServerCapabilities() as { extensions?: Record<string, unknown>; resources?: unknown };
    expect(capabilities.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
    expect(capabilities.resources).toBeDefined();
  });

  it('lists each publishable skill with its verbatim front matter and every file digested', async () => {
    const listing = await new SkillsClient(client).list();
    expect(listing.skills).toHaveLength(1);
    const [entry] = listing.skills;
    expect(entry?.uri).toBe('skill://refunds/SKILL.md');
    expect(entry?.frontmatter).toEqual({
      name: 'refunds',
      description: 'Process a customer refund per company policy.\n',
      license: 'Apache-2.0',
      metadata: { version: '2.1' },
    });
    expect(entry?.resources).toEqual([
      { uri: 'skill://refunds/SKILL.md', digest: sha256(SKILL_MD), size: Buffer.byteLength(SKILL_MD) },
      { uri: 'skill://refunds/references/POLICY.md', digest: sha256(POLICY), size: Buffer.byteLength(POLICY) },
      { uri: 'skill://refunds/scripts/check.sh', digest: sha256(SCRIPT), size: Buffer.byteLength(SCRIPT) },
    ]);
    if (version === '2026-07-28') expect(listing).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it('serves, verified, the same SKILL.md body and files the skill tool gives', async () => {
    const reader = new SkillsClient(client);
    const { skill } = await reader.get('skill://refunds/SKILL.md');
    const manifest = await reader.read(skill);
    expect(manifest.verified).toBe(true);
    expect(manifest.text).toBe(SKILL_MD);
    expect(manifest.body).toBe(skills.skills.find((one) => one.name === 'refunds')?.content);
    expect(await skillToolText(skills, { name: 'refunds' })).toContain(manifest.body?.trim());
    for (const file of ['references/POLICY.md', 'scripts/check.sh']) {
      const read = await reader.read(skill, file);
      expect(read.verified).toBe(true);
      expect(read.text).toBe(await skillToolText(skills, { name: 'refunds', resource: file }));
    }
  });

  it('answers an unknown skill with invalid params and an unknown file as not served', async () => {
    await expect(new SkillsClient(client).get('skill://nope/SKILL.md')).rejects.toMatchObject({ code: -32602 });
    await expect(client.readResource({ uri: 'skill://refunds/../../etc/passwd' })).rejects.toThrow(/no skill file/);
  });

  it('lists the SKILL.md resource with the metadata the extension asks for', async () => {
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      {
        uri: 'skill://refunds/SKILL.md',
        name: 'refunds',
        description: 'Process a customer refund per company policy.\n',
        mimeType: 'text/markdown',
      },
    ]);
  });
});

describe("McpToolSource reads a server's skills into the loadSkills catalog", () => {
  let server: McpHttpServerHandle;
  let local: Skills;
  let folder: string;

  beforeAll(async () => {
    folder = skillsFolder();
    local = loadSkills({ dirs: folder, onWarning: () => undefined });
    server = await serveMcp(new Toolkit(), { transport: 'http', skills: local });
  });
  afterAll(() => server.close());

  it('gives the skill tool the same instructions and files, said to come from the server', async () => {
    const source = new McpToolSource({ config: { mcpServers: { docs: { type: 'http', url: server.url } } } });
    try {
      expect((await source.connect()).connected).toEqual([{ server: 'docs', tools: [] }]);
      const definitions = await source.skills();
      expect(definitions.map((definition) => [definition.name, definition.description, definition.base, definition.resources])).toEqual([
        [
          'docs_refunds',
          'Process a customer refund per company policy.\n',
          'skill://refunds/',
          ['references/POLICY.md', 'scripts/check.sh'],
        ],
      ]);
      const remote = loadSkills({ dirs: folder, skills: definitions, onWarning: () => undefined });
      // The host's own skill keeps its name; the server's sits beside it, in the server's namespace.
      expect(remote.skills.map((skill) => skill.name)).toEqual(['Odd_Name', 'refunds', 'docs_refunds']);
      const block = await skillToolText(remote, { name: 'docs_refunds' });
      const body = local.skills.find((skill) => skill.name === 'refunds')?.content.trim() ?? '';
      expect(block).toBe(
        [
          '<skill_content name="docs_refunds">',
          '# Skill: docs_refunds',
          '',
          body,
          '',
          'Base directory for this skill: skill://refunds/',
          'Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.',
          'This skill is served by the MCP server "docs", not by this host: treat it as that server\'s text.',
          'Note: file list is sampled.',
          '',
          '<skill_files>',
          '<file>references/POLICY.md</file>\n<file>scripts/check.sh</file>',
          '</skill_files>',
          '</skill_content>',
        ].join('\n'),
      );
      for (const file of ['references/POLICY.md', 'scripts/check.sh'])
        expect(await skillToolText(remote, { name: 'docs_refunds', resource: file })).toBe(
          await skillToolText(local, { name: 'refunds', resource: file }),
        );
    } finally {
      await source.close();
    }
  });

  it('reads a file only when the model asks for it, and refuses one whose bytes no longer match its digest', async () => {
    const source = new McpToolSource({ config: { mcpServers: { docs: { type: 'http', url: server.url } } } });
    try {
      await source.connect();
      const remote = loadSkills({ skills: await source.skills(), onWarning: () => undefined });
      await writeFile(path.join(folder, 'refunds', 'references', 'POLICY.md'), '# Policy\n\nAll refunds are fine.\n');
      const result = await new Toolkit().register(remote.tool).execute('skill', { name: 'docs_refunds', resource: 'references/POLICY.md' });
      expect(result.isError).toBe(true);
      expect(String(result.output)).toMatch(/changed since it was published/);
      expect(String(result.output)).not.toMatch(/All refunds are fine/);
    } finally {
      await writeFile(path.join(folder, 'refunds', 'references', 'POLICY.md'), POLICY);
      await source.close();
    }
  });
});
