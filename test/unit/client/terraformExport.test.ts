// Export to Terraform in the extension (rulesmith.exportTerraform) reads the zone as
// `rulesmith terraform export` does: the same rulesets, the same requests of the account,
// and — when the token may not read a custom ruleset the zone executes — the same message
// instead of an export that silently lacks the ruleset. Plain Node: the extension's API
// client and reader (client/src/api/terraformReader.ts) against the local rules service.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RulesApiError } from '../../../client/src/api/errors';
import { RulesApi, type Zone } from '../../../client/src/api/rulesApi';
import { readZoneForExport, rulesApiReader } from '../../../client/src/api/terraformReader';
import { fetchZoneRulesets, runTerraformCommand } from '../../../server/src/cli/terraform';
import type { Io } from '../../../server/src/cli/io';
import { classify, ZoneReadRefused } from '../../../server/src/terraform/collect';
import { exportTerraform } from '../../../server/src/terraform/export';
import { startService, type TestService } from '../../service/harness';

let service: TestService;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.close();
});

const client = (token: string) => new RulesApi({ baseUrl: service.url, credentials: { kind: 'token', token }, maxRetries: 0, local: true });
const accountReads = () => service.log.filter((l) => /^GET \S*\/accounts\//.test(l)).length;

/** The CLI's stderr for an export of `zone` with `token`. */
async function cliError(zone: Zone, token: string): Promise<string> {
  let err = '';
  const io: Io = { out: () => undefined, err: (s) => void (err += s), readFile: () => '', writeFile: () => undefined, readStdin: () => '' };
  assert.equal(await runTerraformCommand(['export', '--zone', zone.id, '--api', service.url], io, { RULESMITH_API_TOKEN: token }), 2);
  return err;
}

test('a zone that runs managed rulesets, with a token scoped to the zone: what the CLI exports, nothing of the account read', async () => {
  const zones = await client(service.adminToken).listZones();
  const migrated = zones.find((z) => z.name === 'migrated.example.com')!;
  const token = service.credentials.get('migrated.example.com WAF')!;
  const before = accountReads();
  const rulesets = await readZoneForExport(client(token), migrated);
  assert.equal(accountReads(), before);
  assert.ok(rulesets.length > 0);
  assert.deepEqual(rulesets, await fetchZoneRulesets(service.url, migrated.id, token));
  assert.match(exportTerraform(rulesets, 5), /\bid += "4814384a9e5d4991b9815dcfc25d2f1f"\n/);
});

test('a zone that runs a custom ruleset of its account: exported with account permissions; refused with the CLI\'s message (not left out) with the zone\'s token', async () => {
  const admin = client(service.adminToken);
  const zone = (await admin.listZones()).find((z) => z.name === 'enterprise.example.com')!;
  const account = zone.account!.id!;
  const created = await service.call('POST', `/accounts/${account}/rulesets`, { token: service.adminToken, body: { name: 'Shop rules', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ ref: 'bots', expression: 'cf.client.bot', action: 'block' }] } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.result.id as string;
  const entry = await service.call('PUT', `/zones/${zone.id}/rulesets/phases/http_request_firewall_custom/entrypoint`, {
    token: service.adminToken,
    body: { rules: [{ ref: 'run-shop', expression: 'http.host eq "shop.example"', action: 'execute', action_parameters: { id } }] },
  });
  assert.equal(entry.status, 200, JSON.stringify(entry.body));

  // With account permissions: the custom ruleset, as the CLI reads it; the zone's account
  // from the zone object, or (a zone id alone) from the zone.
  const rulesets = await readZoneForExport(admin, zone);
  assert.deepEqual(rulesets, await fetchZoneRulesets(service.url, zone.id, service.adminToken));
  assert.deepEqual(await readZoneForExport(admin, { id: zone.id }), rulesets);
  assert.deepEqual(rulesets.at(-1)!.scope, { accountId: account });
  assert.equal(rulesets.at(-1)!.ruleset.id, id);
  assert.match(exportTerraform(rulesets, 5), /\bid += cloudflare_ruleset\.custom_shop_rules\.id\n/);

  // With the zone's token: the export stops, with the message the CLI prints.
  const token = service.credentials.get('enterprise.example.com WAF')!;
  const refused = await readZoneForExport(client(token), zone).then(
    () => assert.fail('the export should stop'),
    (e: unknown) => e,
  );
  assert.ok(refused instanceof ZoneReadRefused);
  assert.equal(
    refused.message,
    `GET /accounts/${account}/rulesets/${id}: 403 Authentication error (10000). Rule 1 "run-shop" of the zone's http_request_firewall_custom ruleset executes custom ruleset ${id}, which belongs to account ${account}, and the API token may not read that account's rulesets: that needs the account-level permission "Account Rulesets Read" (or "Account WAF Read"), which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${account}.`,
  );
  assert.equal(`rulesmith terraform export: ${refused.message}\n`, await cliError(zone, token));
});

test('a token the zone refuses: the API client\'s own error (what runCommand shows with its advice), the refusal the CLI reports', async () => {
  const zone = (await client(service.adminToken).listZones())[0];
  const e = await readZoneForExport(client('wrong'), zone).then(
    () => assert.fail('the export should stop'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof RulesApiError);
  assert.equal(e.operation, `GET /zones/${zone.id}/rulesets`);
  assert.ok(e.status === 401 || e.status === 403, String(e.status));
  assert.ok((await cliError(zone, 'wrong')).startsWith(`rulesmith terraform export: GET /zones/${zone.id}/rulesets: ${e.status} `));
});

test('what a failed read means is decided once (collect.ts\'s classify): the reader gives the status of the API client\'s errors, and nothing else', async () => {
  const zone = (await client(service.adminToken).listZones())[0];
  const reader = rulesApiReader(client('wrong'), zone);
  assert.equal('classify' in reader, false);
  const refused = await reader.listZoneRulesets(zone.id).then(
    () => assert.fail('the read should be refused'),
    (e: unknown) => e,
  );
  assert.ok(refused instanceof RulesApiError);
  assert.equal(reader.status(refused), refused.status);
  assert.equal(classify(reader.status(refused)), 'denied');
  const missing = await rulesApiReader(client(service.adminToken), zone).getAccountRuleset(zone.account!.id!, '0'.repeat(32)).then(
    () => assert.fail('no such ruleset'),
    (e: unknown) => e,
  );
  assert.equal(classify(reader.status(missing)), 'missing');
  assert.equal(reader.status(new Error('not an API answer')), undefined);
});
