// A process that records evaluated requests without pause, handing a batch to the events
// thread every 20 ms and printing `written N` once it is written: durability.test.ts kills
// it mid-write.
import { Store } from '../../../server/src/service/store';
import { SecurityEvents } from '../../../server/src/service/events/writer';
import { CATALOG, evaluated } from './fixture';

const store = new Store(process.argv[2]!);
const sink = new SecurityEvents(store, { catalog: CATALOG, flushMs: 60_000 });
const requests = Array.from({ length: 50 }, (_, i) => evaluated('f'.repeat(32), { path: i % 2 ? '/admin' : '/health', ua: i % 3 ? 'curl/8' : 'Mozilla/5.0', ray: `r${i}` }));
let i = 0;
const record = () => {
  for (let k = 0; k < 100; k++) sink.record(requests[i++ % requests.length]!);
  setImmediate(record);
};
record();
const flush = () =>
  void sink.flush().then(() => {
    process.stdout.write(`written ${sink.stats.written}\n`);
    setTimeout(flush, 20);
  });
flush();
