import { storeCommand } from '../command';
import { shown } from '../answer';
import { EXIT } from '../exit-codes';
import { deliveryViewsOf } from '../../deliveries/view';
import { deliveriesText } from '../format';

/** `pending show ID`: one suspension, every field, arguments redacted; and where it was delivered. */
export const pendingShow = storeCommand({
  path: ['pending', 'show'],
  summary: 'show one suspension: request, arguments (sensitive fields redacted), answer, audit, outcome, where it was delivered',
  usage: 'ID',
  positionals: 1,
  async run({ values, positionals, io, open }) {
    const session = await open();
    const id = positionals[0] as string;
    const call = await session.coordinator.get(id);
    if (!call) {
      if (values.json) io.out(JSON.stringify({ ok: false, code: EXIT.notFound, message: `no suspension ${id}` }));
      else io.err(`no suspension ${id} in ${session.storeShown}`);
      return EXIT.notFound;
    }
    const { text, json } = shown(session, call);
    // The channels' cards of the call (docs/channels.md), on a store that keeps deliveries.
    const deliveries = await deliveryViewsOf(session.store, id, 1000);
    if (values.json) io.out(JSON.stringify(deliveries ? { ...json, deliveries } : json));
    else io.out(deliveries ? `${text}\n${deliveriesText(deliveries)}` : text);
    if (!session.hasTools && !values.json)
      io.err('(arguments are redacted whole without --tools: the CLI cannot tell which fields are sensitive)');
    return EXIT.ok;
  },
});
