/**
 * Regex backtracking on long input (figures, not assertions):
 *
 *   node --import tsx test/bench/backtracking.bench.ts
 *
 * The OWASP-based ruleset (all paranoia levels) over one request whose query is N spaces
 * (`%20` × N), the input that made CRS's PCRE-style patterns backtrack for minutes as JS
 * regexes. Each figure comes from a fresh child process, with and without the V8 fallback
 * to its linear-time regex engine that every Rulesmith process turns on
 * (server/src/regexBudget.ts); the baseline is the same code without it.
 */
import { spawnSync } from 'node:child_process';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import { requestValues } from '../../server/src/requests/fields';
import { compileZone } from '../../server/src/rulesets/engine';
import { row } from './measure';

const SIZES = [1_000, 2_000, 4_000, 8_000];

if (process.argv[2] === 'child') {
  const [, , , n, withBudget] = process.argv;
  if (withBudget === '1') boundRegexBacktracking();
  const zone = compileZone({
    catalog: defaultCatalog,
    entryPoints: { http_request_firewall_managed: { name: 'default', kind: 'zone', phase: 'http_request_firewall_managed', rules: [{ action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } }] } },
  } as never);
  const { values } = requestValues({ method: 'GET', url: `https://e.example.com/?q=${'%20'.repeat(Number(n))}x`, httpVersion: 'HTTP/1.1', headers: [['Host', 'e.example.com']], meta: {} } as never);
  const t = performance.now();
  zone.evaluate(values);
  console.log(String(performance.now() - t));
} else {
  const widths = [14, 22, 22, 8];
  console.log('OWASP-based ruleset (PL1-4, every rule on), one request with N spaces in the query: evaluation time');
  console.log(row(['N spaces', 'with the fallback', 'without (baseline)', 'ratio'], widths));
  for (const n of SIZES) {
    const ms = (budget: string) => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', __filename, 'child', String(n), budget], { encoding: 'utf8', timeout: 600_000 });
      return r.status === 0 ? Number(r.stdout.trim()) : NaN;
    };
    const a = ms('1');
    const b = ms('0');
    console.log(row([String(n), `${a.toFixed(0)} ms`, Number.isNaN(b) ? 'over 10 min' : `${b.toFixed(0)} ms`, Number.isNaN(b) ? '' : `${(b / a).toFixed(1)}×`], widths));
  }
}
