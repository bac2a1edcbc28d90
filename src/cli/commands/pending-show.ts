import { STORE_OPTIONS, type CliCommand } from '../command';
import { shown } from '../answer';
import { deliveriesText, deliveryShown, deliveryStoreOf } from '../deliveries';
import { EXIT } from '../exit-codes';
import { byPlace } from '../../deliveries/view';

/** `pending show ID`: one suspension, every field, arguments redacted; and where it was delivered. */
export const pendingShow: CliCommand = {
  path: ['pending', 'show'],
  summary: 'show one suspension: request, arguments (sensitive fields redacted), answer, audit, outcome, where it was delivered',
  usage: 'ID',
  options: { ...STORE_OPTIONS },
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
    const store = deliveryStoreOf(session.store);
    const deliveries = store ? (await store.listDeliveries({ callId: id, limit: 1000 })).sort(byPlace).map(deliveryShown) : undefined;
    if (values.json) io.out(JSON.stringify(deliveries ? { ...json, deliveries } : json));
    else io.out(deliveries ? `${text}\n${deliveriesText(deliveries)}` : text);
    if (!session.hasTools && !values.json)
      io.err('(arguments are redacted whole without --tools: the CLI cannot tell which fields are sensitive)');
    return EXIT.ok;
  },
};
