import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createService } from '../server/src/service/service';
import { Store } from '../server/src/service/store';
import { demoZoneId, seedDemo } from '../server/src/service/seed';
import { demoSeedSteps } from '../server/src/service/routes/index';
const dir = mkdtempSync(join(tmpdir(), 'putprof-'));
const store = new Store(join(dir, 'x.db'));
const token = seedDemo(store, demoSeedSteps)!.credentials.find((c) => c.name === 'demo admin')!.value;
const running = createService({ store });
await new Promise<void>((r) => running.server.listen(0, '127.0.0.1', r));
const ruleFor = (i: number, v: number) => ({ action: i % 3 === 0 ? 'managed_challenge' : 'block', expression: `(http.request.uri.path wildcard "/app-${i}/*" and ip.src in {192.0.2.0/24 198.51.100.${v % 250}}) or (http.host eq "h${i}.example.com" and http.request.method in {"POST" "PUT"})`, description: `Rule ${i} (edit ${v})`, ref: `rule-${i}` });
const big = (n: number) => Array.from({ length: 500 }, (_, i) => ruleFor(i, Math.floor(i / 50) === n % 10 ? n : 0));
const url = `${running.url()}/zones/${demoZoneId('firewall.example.com')}/rulesets/phases/http_request_firewall_custom/entrypoint`;
// event-loop blocking: the longest gap between timer ticks
let worst = 0; let last = performance.now();
const iv = setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; }, 1);
for (let n = 0; n < 30; n++) {
  if (n === 5) worst = 0;
  const t = performance.now();
  const r = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ rules: big(n) }) });
  await r.text();
  if (n >= 5 && n % 5 === 0) console.log(`PUT ${n}: ${(performance.now() - t).toFixed(1)} ms, worst loop gap so far ${worst.toFixed(1)} ms`);
}
clearInterval(iv);
console.log(`worst event-loop gap over 25 PUTs: ${worst.toFixed(1)} ms`);
await running.close(); store.close();
