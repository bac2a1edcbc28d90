import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';

/** `grants list`: every standing grant the store keeps, revoked and lapsed ones marked (docs/who-may-answer.md, "Grants"). */
export const grantsList = storeCommand({
  path: ['grants', 'list'],
  summary: 'standing grants: who approves which tool, for what, until when',
  usage: '',
  async run({ values, io, open }) {
    const session = await open();
    const grants = await session.coordinator.grants();
    if (values.json) {
      io.out(JSON.stringify(grants));
      return EXIT.ok;
    }
    if (grants.length === 0) {
      io.out('no grants');
      return EXIT.ok;
    }
    const now = Date.now();
    for (const grant of grants) {
      const state =
        grant.revokedAt !== undefined
          ? `revoked ${grant.revokedAt}`
          : grant.until !== undefined && Date.parse(grant.until) <= now
            ? `lapsed ${grant.until}`
            : grant.until !== undefined
              ? `live until ${grant.until}`
              : 'live';
      io.out(`${grant.id}  ${grant.tool}  ${grant.scope} ${grant.subject}  by ${grant.by.id}  ${state}`);
    }
    return EXIT.ok;
  },
});

/** `grants revoke ID`: the next request the grant would have covered is asked. */
export const grantsRevoke = storeCommand({
  path: ['grants', 'revoke'],
  summary: 'revoke a standing grant: the next request it covered is asked',
  usage: 'GRANT_ID',
  positionals: 1,
  async run({ positionals, io, open }) {
    const id = positionals[0] as string;
    const session = await open();
    if (await session.coordinator.revoke(id)) {
      io.out(`revoked ${id}`);
      return EXIT.ok;
    }
    io.err(`no live grant ${id}`);
    return EXIT.notFound;
  },
});
