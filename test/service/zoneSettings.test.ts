// A zone's request body inspection limit (routes/zoneSettings.ts): read and changed through
// the API, refused with a clear error when it is no whole number of bytes in range, and
// used by the Trace of that zone only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const MIGRATED = demoZoneId('migrated.example.com');
const SETTING = (zone: string) => `/zones/${zone}/settings/request_body_inspection_limit`;
const TRACE = `/accounts/${DEMO_ACCOUNT.id}/request-tracer/trace`;
const BROWSER = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64)', Accept: 'text/html', 'Content-Type': 'application/x-www-form-urlencoded' };
// The SQL injection starts at byte 38: inside a 128 KiB limit, past a 16-byte one.
const FORM = `padding=${'x'.repeat(29)}&user=admin' or '1'='1' --`;

const traceForm = async () => {
  const r = await svc.call('POST', TRACE, { body: { url: 'https://migrated.example.com/login', method: 'POST', headers: BROWSER, body: { base64: Buffer.from(FORM).toString('base64') } } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.result.decision.action as string;
};

describe('zone setting request_body_inspection_limit', () => {
  it('is the service default until set: 128 KiB, never modified', async () => {
    const r = await svc.call('GET', SETTING(MIGRATED));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.result, { id: 'request_body_inspection_limit', value: 131072, editable: true, modified_on: null });
  });

  it('refuses a value that is not a whole number of bytes from 0 to 64 MiB, saying what to send', async () => {
    for (const value of [-1, 1.5, '1024', 67108865, null]) {
      const r = await svc.call('PATCH', SETTING(MIGRATED), { body: { value } });
      assert.equal(r.status, 400, JSON.stringify(value));
      assert.deepEqual(r.body.errors, [
        {
          code: 20021,
          message: `request_body_inspection_limit: "value" must be a whole number of bytes from 0 to 67108864 (64 MiB), e.g. {"value": 131072} for 128 KiB; got ${JSON.stringify(value)}`,
          source: { pointer: '/value' },
        },
      ]);
    }
  });

  it('a smaller limit keeps the trace from seeing what lies past it; the setting is per zone', async () => {
    assert.equal(await traceForm(), 'block');
    const set = await svc.call('PATCH', SETTING(MIGRATED), { body: { value: 16 } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.result.value, 16);
    // With microseconds, as every timestamp of the service (rules-api.md: `YYYY-MM-DDTHH:MM:SS.ffffffZ`).
    assert.match(set.body.result.modified_on, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal((await svc.call('GET', SETTING(MIGRATED))).body.result.value, 16);
    assert.notEqual(await traceForm(), 'block');
    const other = await svc.call('GET', SETTING(demoZoneId('enterprise.example.com')));
    assert.equal(other.body.result.value, 131072);
    await svc.call('PATCH', SETTING(MIGRATED), { body: { value: 131072 } });
    assert.equal(await traceForm(), 'block');
  });

  it('answers a zone that does not exist as one this token may not see (no existence leak)', async () => {
    const r = await svc.call('GET', SETTING('0'.repeat(32)));
    assert.deepEqual([r.status, r.body.errors?.[0]?.message], [403, 'Authentication error']);
  });
});
