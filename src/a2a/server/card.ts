import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import { InvalidArgumentError } from '../../errors';
import type { AgentRunner } from '../../runner/agent-runner';
import type { Skills } from '../../skills/skills';
import type { A2ACardOptions, A2ASkill } from './options';

/** The A2A protocol versions served: 1.0 (the SDK's) and 0.3 (`message/send`, `tasks/get`...), over JSON-RPC. */
export const A2A_VERSIONS = ['1.0', '0.3'] as const;

/** The fields an A2A 0.3 client reads of a card (1.0 moved them into `supportedInterfaces`). */
export interface A2ALegacyCardFields {
  url: string;
  protocolVersion: '0.3.0';
  preferredTransport: 'JSONRPC';
}

/**
 * The agent card of `runner` served as an A2A agent: its name, description and skills (given,
 * never its raw tools), one JSON-RPC interface per protocol version served, streaming on. It
 * also carries the 0.3 fields (`url`, `protocolVersion`, `preferredTransport`, as upstream
 * toolnexus's card does), so one card serves clients of either version.
 */
export function agentCardOf(runner: AgentRunner, options: A2ACardOptions): AgentCard & A2ALegacyCardFields {
  if (typeof options?.url !== 'string' || !/^https?:\/\//.test(options.url))
    throw new InvalidArgumentError('an A2A agent needs url: the public http(s) URL of its JSON-RPC endpoint');
  const given = options.skills;
  const skills = given === undefined ? [] : isSkillList(given) ? given : skillsOf(given);
  return {
    name: options.name ?? runner.name ?? 'toolnexus-agent',
    description: options.description ?? '',
    version: options.version ?? '0.1.0',
    supportedInterfaces: A2A_VERSIONS.map((protocolVersion) => ({
      url: options.url,
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion,
    })),
    provider: options.provider ? { organization: options.provider.organization, url: options.provider.url } : undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: skills.map(agentSkill),
    signatures: [],
    url: options.url,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
  };
}

function isSkillList(skills: Skills | readonly A2ASkill[]): skills is readonly A2ASkill[] {
  return Array.isArray(skills);
}

function skillsOf(skills: Skills): A2ASkill[] {
  return skills.skills.map((skill) => ({ id: skill.name, name: skill.name, description: skill.description ?? '' }));
}

function agentSkill(skill: A2ASkill): AgentSkill {
  if (typeof skill?.id !== 'string' || typeof skill.name !== 'string' || typeof skill.description !== 'string')
    throw new InvalidArgumentError('every A2A skill needs id, name and description');
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: [...(skill.tags ?? [])],
    examples: [...(skill.examples ?? [])],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  };
}
