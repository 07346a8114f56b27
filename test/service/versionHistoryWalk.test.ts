// Every version of a ruleset reads back exactly as it was answered (docs/service.md
// "Compact history"), through a seeded random walk of rule POSTs (with positions), PATCHes,
// DELETEs, PUTs, version deletions and restarts of the service on the same database; and a
// deleted version's number is never given again (rules-api.md §2, versions).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createService, type RunningService } from '../../server/src/service/service';
import { Store } from '../../server/src/service/store';
import { DEMO_ACCOUNT, seedDemo } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';

const ACCOUNT = DEMO_ACCOUNT.id;
const CUSTOM = 'http_request_firewall_custom';

/** A service on its own store (closed and deleted after), with the admin token; `restart` opens the same database again. */
async function ownService() {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-history-walk-'));
  const file = join(dir, 'walk.db');
  const seeded = new Store(file);
  const token = seedDemo(seeded, demoSeedSteps)!.credentials.find((c) => c.name === 'demo admin')!.value;
  seeded.close();
  let store!: Store;
  let running!: RunningService;
  let url = '';
  const open = async () => {
    store = new Store(file);
    running = createService({ store });
    await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
    url = running.url();
  };
  const close = async () => {
    await running.close();
    store.close();
  };
  await open();
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as any) : undefined, headers: res.headers };
  };
  return {
    call,
    /** Closes the service and opens the same database again (nothing cached survives). */
    restart: async () => {
      await close();
      await open();
    },
    dispose: async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('every version of a ruleset reads back as it was answered', () => {
  let svc: Awaited<ReturnType<typeof ownService>>;
  before(async () => {
    svc = await ownService();
  });
  after(() => svc.dispose());

  it('through random rule POSTs (with positions), PATCHes, DELETEs, PUTs, version deletions and restarts', async () => {
    let seed = 26;
    const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;
    const base = `/accounts/${ACCOUNT}/rulesets`;
    const made = await svc.call('POST', base, { name: 'history', kind: 'custom', phase: CUSTOM, rules: [] });
    const id: string = made.body.result.id;
    const resultOf = (text: string) => JSON.stringify(JSON.parse(text).result);
    const answered = new Map<number, string>([[1, resultOf(made.text)]]);
    let given = 1;
    let current = made.body.result;
    let n = 0;
    const log: string[] = [];
    for (let step = 0; step < 70; step++) {
      const rules = current.rules as any[];
      const op = rand();
      if (op > 0.85 && answered.size > 1) {
        const v = pick([...answered.keys()]);
        log.push(`DELETE version ${v}`);
        const d = await svc.call('DELETE', `${base}/${id}/versions/${v}`);
        assert.equal(d.status, 204, d.text);
        answered.delete(v);
        current = (await svc.call('GET', `${base}/${id}`)).body.result;
      } else {
        let res;
        if (op < 0.3 || rules.length === 0) {
          const position = rules.length === 0 ? undefined : pick([undefined, { before: pick(rules).id }, { after: pick(rules).id }, { index: 1 + Math.floor(rand() * (rules.length + 1)) }, { before: '' }, { after: '' }]);
          log.push(`POST ${JSON.stringify(position)}`);
          res = await svc.call('POST', `${base}/${id}/rules`, { action: 'block', expression: `http.host eq "n${++n}.example.com"`, ...(position ? { position } : {}) });
        } else if (op < 0.55) {
          const r = pick(rules);
          const others = rules.filter((x) => x.id !== r.id);
          const position = others.length === 0 ? undefined : pick([undefined, { before: pick(others).id }, { after: pick(others).id }, { index: 1 + Math.floor(rand() * rules.length) }]);
          const body = position && rand() < 0.4 ? { position } : { action: pick(['block', 'log', 'challenge']), expression: rand() < 0.5 ? r.expression : `http.host eq "p${++n}.example.com"`, ref: r.ref, ...(position ? { position } : {}) };
          log.push(`PATCH ${JSON.stringify(body)}`);
          res = await svc.call('PATCH', `${base}/${id}/rules/${r.id}`, body);
        } else if (op < 0.65) {
          log.push('DELETE rule');
          res = await svc.call('DELETE', `${base}/${id}/rules/${pick(rules).id}`);
        } else {
          const next = [...rules].sort(() => rand() - 0.5).filter(() => rand() < 0.85).map((x) => (rand() < 0.2 ? { ...x, expression: `http.host eq "u${++n}.example.com"` } : x));
          for (let k = Math.floor(rand() * 3); k > 0; k--) next.splice(Math.floor(rand() * (next.length + 1)), 0, { action: 'block', expression: `http.host eq "q${++n}.example.com"` });
          log.push('PUT');
          res = await svc.call('PUT', `${base}/${id}`, { rules: next, ...(rand() < 0.2 ? { description: `described ${n}` } : {}) });
        }
        assert.equal(res.status, 200, `${log.at(-1)}: ${res.text}`);
        current = res.body.result;
        assert.ok(Number(current.version) > given, `version ${current.version} was given before (${given})`);
        given = Number(current.version);
        answered.set(given, resultOf(res.text));
      }
      if (step % 9 === 0) await svc.restart();
      for (const [v, text] of answered) {
        const got = await svc.call('GET', `${base}/${id}/versions/${v}`);
        assert.equal(resultOf(got.text), text, `version ${v} after:\n${log.join('\n')}`);
      }
    }
    const listed = await svc.call('GET', `${base}/${id}/versions?per_page=3`);
    const all = [...listed.body.result];
    for (let cursor = listed.body.result_info.cursor; cursor; ) {
      const page = await svc.call('GET', `${base}/${id}/versions?per_page=3&cursor=${cursor}`);
      all.push(...page.body.result);
      cursor = page.body.result_info.cursor;
    }
    assert.deepEqual(all.map((h: any) => Number(h.version)), [...answered.keys()].sort((a, b) => a - b));
  });
});
