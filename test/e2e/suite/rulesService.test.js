// The rules-service side of the extension inside a real VS Code, against a real local
// rules service: the one the extension starts itself (rulesmith.api.baseUrl empty), then
// the one the harness started with a temporary database (.rulesmith-e2e/service.json),
// signed in to with a token as a user of a hosted service would. Sign in, browse the
// Zones tree, check / review / validation mode / migrate demo zones, set the paranoia
// level and threshold, deploy with a diff (and a conflict), create firewall rules both
// ways, and the paranoia preview. Modal questions are answered through the extension's
// testing hook (api.testing.answer), which also records what was asked and shown.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const vscode = require('vscode');
const h = require('./helpers');

const OWASP = '4814384a9e5d4991b9815dcfc25d2f1f';

function serviceInfo() {
  return JSON.parse(fs.readFileSync(h.workspaceUri('.rulesmith-e2e/service.json').fsPath, 'utf8'));
}

const labelOf = (item) => (typeof item.label === 'string' ? item.label : item.label && item.label.label);

/** The children of `node` in `view` as {node, label, description}. */
async function kids(view, node) {
  const nodes = (await view.getChildren(node)) || [];
  return Promise.all(
    nodes.map(async (n) => {
      const item = await view.getTreeItem(n);
      return { node: n, label: labelOf(item), description: item.description, item };
    }),
  );
}

async function child(view, node, predicate, what) {
  const list = await kids(view, node);
  const hit = list.find((k) => (typeof predicate === 'string' ? k.label === predicate : predicate(k)));
  assert.ok(hit, `no ${what || predicate} among ${JSON.stringify(list.map((k) => [k.label, k.description]))}`);
  return hit;
}

async function setApi(name, value) {
  await vscode.workspace.getConfiguration('rulesmith.api').update(name, value, vscode.ConfigurationTarget.Global);
  await vscode.workspace.getConfiguration('rulesmith.api').update(name, undefined, vscode.ConfigurationTarget.Workspace);
}

async function setProxyUrl(value) {
  await vscode.workspace.getConfiguration('rulesmith.proxy').update('url', value, vscode.ConfigurationTarget.Global);
}

/** Waits (up to two of the view's 3 s polls) until `node`'s item description matches `re`. */
async function proxyDescriptionMatches(node, re) {
  let description = '';
  for (let i = 0; i < 70; i++) {
    description = (await api().views.zones.getTreeItem(node)).description;
    if (re.test(description)) return description;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`the Proxy item's description ${JSON.stringify(description)} does not match ${re}`);
}

let extensionApi;
const api = () => extensionApi;

/**
 * The zone's Proxy item against the harness's proxy (which fronts migrated.example.com): a
 * setting that names nothing there says what failed and what to check; once the setting
 * names the proxy, the same item (polled, not redrawn by hand) shows the proxy and its counters.
 */
async function proxyItemFollowsItsProxy(zoneNode) {
  const { proxyUrl } = serviceInfo();
  assert.match(proxyUrl, /^http:\/\/127\.0\.0\.1:\d+$/, 'the harness gives its proxy URL');
  // A port nothing listens on (one just freed).
  const closed = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
  try {
    await setProxyUrl(closed);
    const item = (await kids(api().views.zones, zoneNode))[0];
    assert.equal(item.label, 'Proxy');
    assert.equal(item.description, `the WAF proxy at ${closed} cannot be reached (ECONNREFUSED): is \`rulesmith serve\` running with --proxy-listen there? Check rulesmith.proxy.url`);
    assert.equal(item.item.contextValue, 'proxy.unavailable');
    await setProxyUrl(proxyUrl);
    await proxyDescriptionMatches(item.node, /^http:\/\/migrated\.example\.com\.localhost:\d+\/ · \d+ requests, \d+ blocked, \d+ challenged$/);
    assert.equal((await api().views.zones.getTreeItem(item.node)).contextValue, 'proxy.running');
  } finally {
    await setProxyUrl(undefined);
  }
}

describe('Rulesmith: zones, migration and deploy against a real rules service', function () {
  this.timeout(120_000);
  let api;
  let zones; // name -> Zone

  before(async function () {
    ({ api } = await h.activateExtension());
    extensionApi = api;
    api.testing.clear();
  });

  afterEach(async function () {
    const left = api.testing.pending();
    api.testing.clear();
    await h.closeAllWithoutSaving();
    assert.equal(left, 0, 'every queued answer was used');
  });

  after(async function () {
    // Leave the settings as the UI tests expect them: the local service, no zone.
    for (const k of ['baseUrl', 'zoneId', 'accountId']) {
      await vscode.workspace.getConfiguration('rulesmith.api').update(k, undefined, vscode.ConfigurationTarget.Global);
      await vscode.workspace.getConfiguration('rulesmith.api').update(k, undefined, vscode.ConfigurationTarget.Workspace);
    }
    await vscode.commands.executeCommand('rulesmith.signOut');
  });

  it('starts its own local rules service and signs in to it with its own token; sign out empties the tree', async function () {
    await setApi('baseUrl', undefined);
    const r = await vscode.commands.executeCommand('rulesmith.signIn');
    assert.ok(r, `sign in failed: ${JSON.stringify(api.testing.peek())}`);
    assert.equal(r.local, true);
    assert.match(r.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/client\/v4$/);
    const accounts = await kids(api.views.zones);
    assert.deepEqual(accounts.map((a) => a.label), ['Rulesmith Demo']);
    const names = (await kids(api.views.zones, accounts[0].node)).map((z) => `${z.label} ${z.description}`);
    assert.ok(names.includes('enterprise.example.com Enterprise Website'), names.join(', '));
    assert.equal(names.length, 6, names.join(', '));
    const first = api.connection.local.running;
    assert.ok(first.pid > 0);
    assert.equal(first.shared, undefined, 'this window started it');
    // Restart: a new process on the same database, the same zones.
    const again = await vscode.commands.executeCommand('rulesmith.restartLocalService');
    assert.match(again, /^http:\/\/127\.0\.0\.1:\d+\/client\/v4$/);
    assert.notEqual(api.connection.local.running.pid, first.pid);
    assert.equal((await kids(api.views.zones, (await kids(api.views.zones))[0].node)).length, 6);

    await vscode.commands.executeCommand('rulesmith.signOut');
    assert.equal(api.connection.state().signedIn, false);
    assert.deepEqual(await api.views.zones.getChildren(), [], 'signed out: the welcome view shows');
  });

  it('signs in to a rules service by URL with a token: a wrong token is refused with the API message, the right one verified and kept', async function () {
    const svc = serviceInfo();
    await setApi('baseUrl', svc.baseUrl);
    assert.equal(api.connection.isLocal, false);
    api.testing.take();
    const refused = await vscode.commands.executeCommand('rulesmith.signIn', { token: 'not-a-valid-token' });
    assert.equal(refused, undefined);
    const shown = api.testing.take().filter((a) => a.kind === 'error');
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.match(shown[0].message, /Sign-in refused: .*\(code \d+\)\. The credentials were refused: run "Rulesmith: Sign In" again/);
    assert.equal(api.connection.state().signedIn, false);

    // A plain-http URL on another host: refused before anything is sent (the token would travel in the clear).
    await setApi('baseUrl', 'http://rules.example.invalid/client/v4');
    assert.equal(await vscode.commands.executeCommand('rulesmith.signIn', { token: 'not-sent' }), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Sign-in refused: rulesmith\.api\.baseUrl \(http:\/\/rules\.example\.invalid\) is not https: the API token would travel unencrypted\. Use an https:\/\/ URL/);
    await setApi('baseUrl', svc.baseUrl);

    // Through the prompts, as a person would (the token typed into a password box).
    api.testing.answer('API token', svc.token);
    const ok = await vscode.commands.executeCommand('rulesmith.signIn');
    assert.ok(ok, JSON.stringify(api.testing.peek()));
    assert.equal(ok.local, false);
    assert.equal(ok.status, 'active');
    assert.equal(api.connection.state().signedIn, true);
    const asked = api.testing.take();
    assert.ok(asked.some((a) => a.kind === 'input' && a.answer === '***'), 'the token is never recorded');

    const accounts = await kids(api.views.zones);
    const list = await kids(api.views.zones, accounts[0].node);
    zones = Object.fromEntries(list.map((k) => [k.label, k.node.zone]));

    // Email + Global API key: verified by listing accounts; sign out removes them.
    if (svc.key) {
      await vscode.commands.executeCommand('rulesmith.signOut');
      assert.equal(api.connection.state().signedIn, false);
      assert.deepEqual(await api.views.zones.getChildren(), []);
      api.testing.answer('Email and Global API key', svc.email, svc.key);
      const byKey = await vscode.commands.executeCommand('rulesmith.signIn');
      assert.ok(byKey, JSON.stringify(api.testing.peek()));
      assert.equal((await kids(api.views.zones))[0].label, 'Rulesmith Demo');
      await vscode.commands.executeCommand('rulesmith.signIn', { token: svc.token });
    }
    // The credentials are bound to the URL they were verified at: with the setting pointed
    // elsewhere (say, by a workspace's .vscode/settings.json) they are not used there.
    await setApi('baseUrl', 'http://127.0.0.1:9/client/v4');
    await api.connection.refreshState();
    assert.equal(api.connection.state().signedIn, false, 'not signed in at another URL');
    api.testing.take();
    api.testing.answer(undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.signIn'), undefined);
    assert.equal(api.testing.take().find((a) => a.kind === 'pick').message, 'Sign in to http://127.0.0.1:9/client/v4 with…');
    await setApi('baseUrl', svc.baseUrl);
    await api.connection.refreshState();
    assert.equal(api.connection.state().signedIn, true, 'back at the URL they were verified for');
    assert.deepEqual(Object.keys(zones).sort(), ['business.example.com', 'enterprise.example.com', 'firewall.example.com', 'migrated.example.com', 'overrides.example.com', 'pro.example.com']);
  });

  it('browses the tree: choosing a zone, its phases, the managed entry point, and the effective state of the managed rules grouped by paranoia level and tag', async function () {
    const zone = zones['migrated.example.com'];
    // A change of the setting itself (not through the command) is announced too: the
    // status bar and the views follow it.
    const announced = h.waitForEvent(api.connection.onDidChange, (st) => st.zoneId === zone.id, () => false, 10_000, 'the zone change to be announced');
    await setApi('zoneId', zone.id);
    await announced;
    await vscode.commands.executeCommand('rulesmith.chooseZone', zone);
    assert.equal(api.connection.zoneId, zone.id);
    const account = (await kids(api.views.zones))[0];
    const z = await child(api.views.zones, account.node, 'migrated.example.com');
    assert.match(z.description, /chosen/);
    const phases = await kids(api.views.zones, z.node);
    // First the zone's WAF proxy item: this service is not the extension's own, so no proxy is known.
    assert.deepEqual(phases.map((p) => p.description), ['no proxy (set rulesmith.proxy.url)', 'http_request_firewall_custom', 'http_ratelimit', 'http_request_firewall_managed']);
    await proxyItemFollowsItsProxy(z.node);
    const managed = phases[3];
    const ep = (await kids(api.views.zones, managed.node))[0];
    assert.match(ep.description, /^entry point · version \d+ · \d+ rules$/);
    const rules = await kids(api.views.zones, ep.node);
    const exec = rules.find((r) => r.node.rule && r.node.rule.action === 'execute' && r.node.rule.action_parameters.id === OWASP);
    assert.ok(exec, `an execute rule of the OWASP-based ruleset: ${JSON.stringify(rules.map((r) => [r.label, r.description]))}`);
    assert.equal(exec.item.contextValue, 'rule.execute.scored', 'its context menu offers paranoia level and threshold');
    const other = rules.find((r) => r.node.rule && r.node.rule.action === 'execute' && r.node.rule.action_parameters.id !== OWASP);
    if (other) assert.equal(other.item.contextValue, 'rule.execute');
    // From the tree item: the zone and the rule are the item's.
    api.testing.take();
    api.testing.answer('Paranoia level 2', 'Apply');
    const fromTree = await vscode.commands.executeCommand('rulesmith.setParanoiaLevel', exec.node);
    assert.ok(fromTree, JSON.stringify(api.testing.peek()));
    assert.deepEqual([fromTree.target, fromTree.where, fromTree.level], ['zone', 'migrated.example.com', 2]);
    assert.match(api.testing.take().find((a) => a.kind === 'confirm').detail, /^Paranoia level \d → 2\./);
    const groups = await kids(api.views.zones, exec.node);
    const pl1 = groups.find((g) => g.label === 'Paranoia level 1');
    assert.ok(pl1, JSON.stringify(groups.map((g) => g.label)));
    assert.match(pl1.description, /^\d+ of \d+ enabled$/);
    assert.ok(groups.some((g) => g.label === 'By tag'));
    const first = (await kids(api.views.zones, pl1.node))[0];
    assert.ok(first.item.tooltip, 'a managed rule has a tooltip');
    assert.match(first.description, /block|log|score|disabled|challenge/);

    // The Managed rulesets view: rulesets of the account with their rules by tag.
    const rulesets = await kids(api.views.managed);
    assert.ok(rulesets.some((r) => /OWASP/.test(r.label)), JSON.stringify(rulesets.map((r) => r.label)));
    // The Migration view of a migrated zone.
    const mig = (await kids(api.views.migration)).map((k) => k.label);
    assert.ok(mig.includes('Migration: migrated'), mig.join(' | '));
    assert.ok(mig.includes('New managed rules: enabled'), mig.join(' | '));
  });

  it('checks the migration: an ineligible zone says why, an eligible one says it can migrate', async function () {
    const bad = await vscode.commands.executeCommand('rulesmith.checkMigration', zones['overrides.example.com']);
    assert.equal(bad.compatible, false);
    const warn = api.testing.take().find((a) => a.kind === 'warning');
    assert.ok(warn && /cannot migrate yet: .*overrides/i.test(warn.message), JSON.stringify(warn));
    const good = await vscode.commands.executeCommand('rulesmith.checkMigration', zones['pro.example.com']);
    assert.equal(good.compatible, true);
  });

  it('reviews the new configuration as a *.ruleset.json, with what will not be migrated listed', async function () {
    const r = await vscode.commands.executeCommand('rulesmith.reviewMigration', zones['business.example.com']);
    assert.ok(r, JSON.stringify(api.testing.peek()));
    assert.match(r.uri.path, /business\.example\.com\.migration\.ruleset\.json$/);
    const doc = await vscode.workspace.openTextDocument(r.uri);
    const body = JSON.parse(doc.getText());
    assert.equal(body.phase, 'http_request_firewall_managed');
    assert.ok(body.rules.some((x) => x.action === 'execute' && x.action_parameters.id === OWASP), doc.getText().slice(0, 800));
    assert.equal(r.notes.scheme, 'rulesmith-migration');
    const notes = await vscode.workspace.openTextDocument(r.notes);
    assert.match(notes.getText(), /^# Migration of business\.example\.com: what will not be migrated/);
    assert.ok(r.notMigrated.length > 0, 'the demo business zone has rule modes that do not migrate');
    for (const n of r.notMigrated) assert.ok(notes.getText().includes(`| ${n.id} |`), `${n.id} is listed`);
  });

  it('validation mode: refused on a Business zone, started on the Enterprise one, then migrate finishes it', async function () {
    const refused = await vscode.commands.executeCommand('rulesmith.startValidationMode', zones['business.example.com']);
    assert.equal(refused, undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /Validation mode is for Enterprise zones; business\.example\.com is on Business Website/);

    api.testing.answer('Start Validation Mode');
    const v = await vscode.commands.executeCommand('rulesmith.startValidationMode', zones['enterprise.example.com']);
    assert.ok(v, JSON.stringify(api.testing.peek()));
    assert.equal(v.migration_state, 'validation');
    assert.equal(v.old_waf_status, 'enabled');
    assert.equal(v.new_waf_status, 'enabled');

    api.testing.answer('Migrate');
    const done = await vscode.commands.executeCommand('rulesmith.migrate', zones['enterprise.example.com']);
    assert.ok(done, JSON.stringify(api.testing.peek()));
    assert.equal(done.migration_state, 'complete');
    assert.equal(done.old_waf_status, 'disabled');
    assert.equal(done.new_waf_status, 'enabled');
  });

  it('migrate: the confirmation says it is irreversible; Cancel changes nothing; Migrate migrates and shows the new state', async function () {
    const pro = zones['pro.example.com'];
    // Review, edit the file; reviewing again asks before replacing the edits.
    const rev = await vscode.commands.executeCommand('rulesmith.reviewMigration', pro);
    assert.ok(rev, JSON.stringify(api.testing.peek()));
    const doc = await vscode.workspace.openTextDocument(rev.uri);
    const body = JSON.parse(doc.getText());
    body.rules[0].description = 'e2e edited';
    // A deprecated field: the service migrates and warns (code 20040); the warning is shown.
    body.rules[0].expression = 'ip.geoip.country ne "T1"';
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), JSON.stringify(body, null, 2));
    await vscode.workspace.applyEdit(edit);
    await h.saveDocument(doc);
    api.testing.take();
    api.testing.answer('Keep My Edits');
    const again = await vscode.commands.executeCommand('rulesmith.reviewMigration', pro);
    assert.equal(again.kept, true);
    assert.match(api.testing.take().find((a) => a.kind === 'confirm').message, /^pro\.example\.com\.migration\.ruleset\.json has edits: it differs from the configuration the service proposes\.$/);
    assert.equal(JSON.parse(doc.getText()).rules[0].description, 'e2e edited');

    api.testing.answer(undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.migrate', pro), undefined);
    const asked = api.testing.take().find((a) => a.kind === 'confirm');
    assert.match(asked.message, /^Migrate pro\.example\.com to the new managed rules\? This is irreversible\.$/);
    // The default (first) button of the irreversible dialog is not Migrate.
    assert.deepEqual(asked.items, ['Review First', 'Migrate']);
    assert.match(asked.detail, /no way back/);
    assert.match(asked.detail, /\(from the reviewed file pro\.example\.com\.migration\.ruleset\.json, edited: 1 rule changed \(description, expression\), compared with the proposal\)/);
    assert.equal((await vscode.commands.executeCommand('rulesmith.checkMigration', pro)).migration_state !== 'complete', true);

    api.testing.answer('Migrate');
    const s = await vscode.commands.executeCommand('rulesmith.migrate', pro);
    assert.ok(s, JSON.stringify(api.testing.peek()));
    assert.equal(s.migration_state, 'complete');
    assert.ok(s.warnings.some((w) => /ip\.geoip\.country.*\(code 20040\)$/.test(w)), JSON.stringify(s.warnings));
    const shown = api.testing.take().find((a) => a.kind === 'warning');
    assert.match(shown.message, /^pro\.example\.com: migration state complete — previous managed rules disabled, new managed rules enabled\. The service warned: .*ip\.geoip\.country.*\(code 20040\)/);
  });

  it('pulls the managed entry point, sets the paranoia level and threshold in the file, deploys with a diff; a zone changed meanwhile is a conflict', async function () {
    const pro = zones['pro.example.com'];
    await vscode.commands.executeCommand('rulesmith.chooseZone', pro);
    const pulled = await vscode.commands.executeCommand('rulesmith.pullEntryPoint', pro, 'http_request_firewall_managed');
    assert.ok(pulled, JSON.stringify(api.testing.peek()));
    assert.match(pulled.uri.path, /rulesets\/pro\.example\.com\/http_request_firewall_managed\.ruleset\.json$/);
    const doc = await vscode.workspace.openTextDocument(pulled.uri);
    await vscode.window.showTextDocument(doc);
    assert.equal(JSON.parse(doc.getText()).version, pulled.version);

    const pl = await vscode.commands.executeCommand('rulesmith.setParanoiaLevel', 2, { target: 'file' });
    assert.ok(pl, JSON.stringify(api.testing.peek()));
    const th = await vscode.commands.executeCommand('rulesmith.setScoreThreshold', 25, { target: 'file', action: 'managed_challenge' });
    assert.ok(th, JSON.stringify(api.testing.peek()));
    const edited = JSON.parse(doc.getText());
    const exec = edited.rules.find((x) => x.action === 'execute' && x.action_parameters.id === OWASP);
    const cats = exec.action_parameters.overrides.categories.filter((c) => /^paranoia-level-/.test(c.category) && c.enabled === false).map((c) => c.category);
    assert.deepEqual(cats.sort(), ['paranoia-level-3', 'paranoia-level-4']);
    assert.ok(exec.action_parameters.overrides.rules.some((r) => r.score_threshold === 25 && r.action === 'managed_challenge'));
    await h.saveDocument(doc);

    // The diff's title leads with the summary of what the deploy changes.
    const diffOpen = () => vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputTextDiff && /^1 rule changed \(action_parameters\) — pro\.example\.com http_request_firewall_managed: zone version \d+ ↔/.test(t.label)));
    // Cancel: nothing deployed, the diff stays open to read.
    api.testing.answer(undefined);
    const cancelled = await vscode.commands.executeCommand('rulesmith.deploy', doc.uri);
    assert.equal(cancelled.deployed, false);
    assert.ok(diffOpen(), 'the diff is open');
    api.testing.take();

    api.testing.answer('Deploy');
    const d = await vscode.commands.executeCommand('rulesmith.deploy', doc.uri);
    assert.ok(d && d.deployed, JSON.stringify([d, api.testing.peek()]));
    assert.equal(Number(d.version), Number(pulled.version) + 1);
    assert.match(d.summary, /1 rule changed \(action_parameters\)/);
    // Asked in a notification (not a modal over the diff), naming the rule by its description.
    const confirm = api.testing.take().find((a) => a.kind === 'confirm');
    assert.deepEqual(confirm.items, ['Deploy', 'Cancel']);
    assert.equal(confirm.detail, undefined);
    assert.match(confirm.message, /^Deploy http_request_firewall_managed\.ruleset\.json to pro\.example\.com \(http_request_firewall_managed\)\? 1 rule changed \(action_parameters\): ~ [^;]+: action_parameters\. The zone runs version \d+ now; the diff is open \(hover a rule for its id\)\.$/);
    assert.doesNotMatch(confirm.message, /[0-9a-f]{32}/, 'rules are named by description or ref, not by id');
    assert.equal(diffOpen(), false, 'the diff of the version replaced is closed after the deploy');
    assert.equal(JSON.parse(doc.getText()).version, d.version, 'the file follows the deployed version');

    // Someone changes the zone (here: the same command on the zone); the file is now stale.
    api.testing.answer('Apply');
    const onZone = await vscode.commands.executeCommand('rulesmith.setParanoiaLevel', 1, { target: 'zone', zone: pro });
    assert.ok(onZone, JSON.stringify(api.testing.peek()));
    assert.equal(Number(onZone.version), Number(d.version) + 1);
    assert.match(api.testing.take().find((a) => a.kind === 'confirm').detail, /^Paranoia level 2 → 1\.\n\nThis changes the rule /);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('rulesmith.setScoreThreshold', 60, { target: 'file' });
    // (The custom rules' entry point too, for the next test.)
    assert.ok(await vscode.commands.executeCommand('rulesmith.pullEntryPoint', pro, 'http_request_firewall_custom'));
    const conflict = await vscode.commands.executeCommand('rulesmith.deploy', doc.uri);
    assert.equal(conflict, undefined);
    const err = api.testing.take().find((a) => a.kind === 'error');
    assert.match(err.message, new RegExp(`Conflict: pro\\.example\\.com's http_request_firewall_managed entry point changed since http_request_firewall_managed\\.ruleset\\.json was pulled \\(pulled version ${d.version}, now version ${onZone.version}\\)\\. Nothing was deployed`));
  });

  it('asks for the paranoia level and the threshold as the palette does (quick picks), on the open file', async function () {
    const uri = h.workspaceUri('rulesets/pro.example.com/http_request_firewall_managed.ruleset.json');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    api.testing.answer('Paranoia level 3');
    const pl = await vscode.commands.executeCommand('rulesmith.setParanoiaLevel');
    assert.deepEqual([pl.target, pl.level], ['file', 3]);
    const picked = api.testing.take().find((a) => a.kind === 'pick');
    assert.deepEqual(picked.items, ['Paranoia level 1', 'Paranoia level 2', 'Paranoia level 3', 'Paranoia level 4']);
    api.testing.answer('40', 'log');
    const th = await vscode.commands.executeCommand('rulesmith.setScoreThreshold');
    assert.deepEqual([th.target, th.threshold, th.action], ['file', 40, 'log']);
    const exec = JSON.parse(doc.getText()).rules.find((x) => x.action === 'execute' && x.action_parameters.id === OWASP);
    assert.ok(exec.action_parameters.overrides.categories.some((c) => c.category === 'paranoia-level-4' && c.enabled === false));
    assert.ok(!exec.action_parameters.overrides.categories.some((c) => c.category === 'paranoia-level-3' && c.enabled === false));
    assert.ok(exec.action_parameters.overrides.rules.some((r) => r.score_threshold === 40 && r.action === 'log'));
    await h.revertActive();
  });

  it('the OWASP-based ruleset deployed twice (block at PL1, log at PL4): the command asks which deployment to tune', async function () {
    const uri = h.workspaceUri('double-owasp.ruleset.json');
    const body = {
      name: 'default',
      kind: 'zone',
      phase: 'http_request_firewall_managed',
      rules: [
        { ref: 'owasp-block', description: 'OWASP block at PL1', action: 'execute', expression: 'true', action_parameters: { id: OWASP } },
        { ref: 'owasp-log', description: 'OWASP log at PL4', action: 'execute', expression: 'true', action_parameters: { id: OWASP } },
      ],
    };
    fs.writeFileSync(uri.fsPath, `${JSON.stringify(body, null, 2)}\n`);
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc);
      api.testing.answer('Rule 2: OWASP log at PL4');
      const r = await vscode.commands.executeCommand('rulesmith.setParanoiaLevel', 2, { target: 'file' });
      assert.ok(r, JSON.stringify(api.testing.peek()));
      const picked = api.testing.take().find((a) => a.kind === 'pick');
      assert.equal(picked.message, 'double-owasp.ruleset.json deploys the OWASP-based ruleset 2 times: which deployment?');
      assert.deepEqual(picked.items, ['Rule 1: OWASP block at PL1', 'Rule 2: OWASP log at PL4']);
      const after = JSON.parse(doc.getText());
      assert.equal(after.rules[0].action_parameters.overrides, undefined, 'the other deployment is untouched');
      const cats = after.rules[1].action_parameters.overrides.categories.filter((c) => c.enabled === false).map((c) => c.category);
      assert.deepEqual(cats.sort(), ['paranoia-level-3', 'paranoia-level-4']);
      api.testing.answer(undefined);
      assert.equal(await vscode.commands.executeCommand('rulesmith.setScoreThreshold', 60, { target: 'file' }), undefined, 'cancelled at the question');
      await h.revertActive();
    } finally {
      fs.rmSync(uri.fsPath, { force: true });
    }
  });

  it('refuses to deploy a file with errors', async function () {
    const uri = h.workspaceUri('rulesets/pro.example.com/http_request_firewall_custom.ruleset.json');
    const doc = await vscode.workspace.openTextDocument(uri);
    const edit = new vscode.WorkspaceEdit();
    const body = JSON.parse(doc.getText());
    body.rules = [...(body.rules || []), { ref: 'broken', action: 'block', expression: 'http.hots eq "x"' }];
    edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), JSON.stringify(body, null, 2));
    await vscode.workspace.applyEdit(edit);
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', uri), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Not deployed: http_request_firewall_custom\.ruleset\.json has 1 error \(line \d+: unknown identifier "http\.hots"\)\. Fix them/);
  });

  it('a zone changed while a confirmation is open is a conflict (deploy, threshold on the zone); pull asks before replacing edits not deployed', async function () {
    const pro = zones['pro.example.com'];
    const phase = 'http_request_firewall_custom';
    // (The previous test left its unsaved edit in this file: throw it away.)
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(h.workspaceUri(`rulesets/pro.example.com/${phase}.ruleset.json`)));
    await h.revertActive();
    const pulled = await vscode.commands.executeCommand('rulesmith.pullEntryPoint', pro, phase);
    assert.ok(pulled, JSON.stringify(api.testing.peek()));
    assert.ok(!api.testing.take().some((a) => a.kind === 'confirm'), 'the file was what the zone has: no question');
    const doc = await vscode.workspace.openTextDocument(pulled.uri);
    const body = JSON.parse(doc.getText());
    body.rules = [...(body.rules || []), { ref: 'e2e-race', description: 'e2e race', action: 'block', expression: 'http.request.uri.path eq "/race"' }];
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), JSON.stringify(body, null, 2));
    await vscode.workspace.applyEdit(edit);
    await h.saveDocument(doc);

    // While the deploy confirmation is open, someone else writes the entry point.
    const rulesApi = await api.connection.api();
    let other;
    api.testing.answer(async () => {
      const ep = await rulesApi.getEntryPoint(pro.id, phase);
      other = await rulesApi.putEntryPoint(pro.id, phase, { rules: [...((ep && ep.rules) || []), { ref: 'someone-else', action: 'block', expression: 'http.host eq "other.example"' }] });
      return 'Deploy';
    });
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', doc.uri), undefined);
    const shown = api.testing.take();
    assert.ok(shown.some((a) => a.kind === 'progress' && /checking http_request_firewall_custom\.ruleset\.json and reading pro\.example\.com's/.test(a.message)), JSON.stringify(shown));
    const err = shown.find((a) => a.kind === 'error');
    assert.match(err.message, new RegExp(`^Conflict: pro\\.example\\.com's ${phase} entry point changed while the deploy was being confirmed \\(version ${pulled.version ?? 'none'} → ${other.version}\\)\\. Nothing was deployed`));
    const zoneNow = await rulesApi.getEntryPoint(pro.id, phase);
    assert.equal(zoneNow.version, other.version);
    assert.ok(!zoneNow.rules.some((r) => r.ref === 'e2e-race'), 'the file was not deployed over the other change');

    // Pulling again would lose the file's edits: it asks; Cancel keeps them.
    api.testing.answer(undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.pullEntryPoint', pro, phase), undefined);
    const q = api.testing.take().find((a) => a.kind === 'confirm');
    assert.match(q.message, /^http_request_firewall_custom\.ruleset\.json differs from pro\.example\.com's http_request_firewall_custom entry point\.$/);
    assert.match(q.detail, /changes in the file that are not deployed are lost/);
    assert.ok(JSON.parse(doc.getText()).rules.some((r) => r.ref === 'e2e-race'), 'the edits are still there');

    // The threshold on the zone: the entry point changes while the question is open.
    api.testing.answer(async (asked) => {
      assert.match(asked.detail, /^Threshold \d+( \(\w+\))? → 40 \(block\)\./);
      const ep = await rulesApi.getEntryPoint(pro.id, 'http_request_firewall_managed');
      const exec = ep.rules.find((r) => r.action === 'execute' && r.action_parameters.id === OWASP);
      await rulesApi.editRule(pro.id, ep.id, exec.id, exec);
      return 'Apply';
    });
    assert.equal(await vscode.commands.executeCommand('rulesmith.setScoreThreshold', 40, { target: 'zone', zone: pro, action: 'block' }), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Conflict: pro\.example\.com's http_request_firewall_managed entry point changed while the change was being confirmed \(version \d+ → \d+\)\. Nothing was changed/);
  });

  it('deploy shows the warnings the service answers with (a deprecated field), beside the new version', async function () {
    assert.equal(api.connection.zoneId, zones['pro.example.com'].id);
    const uri = h.workspaceUri('rulesets/warned.ruleset.json');
    fs.writeFileSync(uri.fsPath, `${JSON.stringify({ name: 'default', kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ ref: 'geo', description: 'e2e geo', action: 'block', expression: 'ip.geoip.country eq "T1"' }] }, null, 2)}\n`);
    try {
      api.testing.answer('Deploy');
      const d = await vscode.commands.executeCommand('rulesmith.deploy', uri);
      assert.ok(d && d.deployed, JSON.stringify([d, api.testing.peek()]));
      assert.ok(d.warnings && d.warnings.length > 0, JSON.stringify(d));
      assert.ok(d.warnings.some((w) => /\(code 20040\)$/.test(w)), JSON.stringify(d.warnings));
      const shown = api.testing.take();
      const confirm = shown.find((a) => a.kind === 'confirm');
      assert.match(confirm.message, /was not pulled from this zone: deploying replaces version \d+ as the diff shows\.$/);
      const warn = shown.find((a) => a.kind === 'warning');
      assert.match(warn.message, /^Deployed to pro\.example\.com \(http_request_firewall_custom\): version \d+\. .*It is deployed, with \d+ warnings? from the service: .*ip\.geoip\.country.*\(code 20040\)/);
    } finally {
      fs.rmSync(uri.fsPath, { force: true });
    }
  });

  it('deploy refuses a JSON file that is not a ruleset, and a file pulled from another rules service, saying which', async function () {
    const uri = h.workspaceUri('not-a-ruleset.json');
    fs.writeFileSync(uri.fsPath, '{ "name": "x" }\n');
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', uri), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Not deployed: not-a-ruleset\.json is not a ruleset \(it has no "rules" array\)/);
    fs.rmSync(uri.fsPath);
    const custom = h.workspaceUri('my-custom.ruleset.json');
    fs.writeFileSync(custom.fsPath, JSON.stringify({ name: 'mine', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ action: 'block', expression: 'http.host eq "x"' }] }));
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', custom), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Not deployed: my-custom\.ruleset\.json is a ruleset of kind "custom", not a zone entry point; deploying it would replace every rule of the zone's http_request_firewall_custom entry point/);
    fs.rmSync(custom.fsPath);
    const broken = h.workspaceUri('broken.ruleset.json');
    fs.writeFileSync(broken.fsPath, '{ "rules": [ }\n');
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', broken), undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^Not deployed: broken\.ruleset\.json is not valid JSON/);
    fs.rmSync(broken.fsPath);

    const svc = serviceInfo();
    const file = h.workspaceUri('rulesets/pro.example.com/http_request_firewall_managed.ruleset.json');
    await setApi('baseUrl', 'http://127.0.0.1:9/client/v4');
    try {
      assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', file), undefined);
      const e = api.testing.take().find((a) => a.kind === 'error');
      assert.ok(e, 'refused');
      // Not signed in there (the credentials are bound to their URL) or pulled elsewhere: either way nothing is sent.
      assert.match(e.message, /not signed in|was pulled from pro\.example\.com on http:\/\/127\.0\.0\.1:\d+\/client\/v4, but Rulesmith is now connected to http:\/\/127\.0\.0\.1:9\/client\/v4/);
    } finally {
      await setApi('baseUrl', svc.baseUrl);
      await api.connection.refreshState();
    }
  });

  it('traces a sample request on the chosen zone with the rules service (lens, decision, steps)', async function () {
    assert.equal(api.connection.zoneId, zones['pro.example.com'].id);
    const uri = h.workspaceUri('evaluate/requests.http');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
    const trace = lenses.filter((l) => l.command && l.command.command === 'rulesmith.traceOnZone');
    assert.deepEqual(trace.map((l) => [l.range.start.line, l.command.title, l.command.arguments[1]]), [
      [1, '⇢ Trace on zone', 0],
      [5, '⇢ Trace on zone', 1],
    ]);
    const attack = await vscode.commands.executeCommand(trace[0].command.command, ...trace[0].command.arguments);
    assert.ok(attack, JSON.stringify(api.testing.peek()));
    assert.equal(attack.zone.name, 'pro.example.com');
    assert.notEqual(attack.decision.action, 'allow-through', JSON.stringify(attack.decision));
    assert.ok(attack.trace.some((s) => s.type === 'phase' && s.step_name === 'http_request_firewall_managed'), JSON.stringify(attack.trace.map((s) => s.step_name)));
    assert.match(attack.markdown, /^# Log4Shell in the query — traced on pro\.example\.com/);
    assert.match(attack.markdown, /`GET https:\/\/pro\.example\.com\/search\?q=/);
    assert.match(attack.markdown, /## Decision: (block|managed_challenge|challenge|js_challenge)/);
    const home = await vscode.commands.executeCommand('rulesmith.traceOnZone', uri.toString(), 1);
    assert.equal(home.decision.action, 'allow-through', JSON.stringify(home.decision));
    // The verdict names what happened (a rule that logged, a score below the threshold), or that nothing did.
    const decision = /## Decision: (Passed — [^\n]+)\n/.exec(home.markdown);
    assert.ok(decision, home.markdown.slice(0, 600));
    const logged = [];
    const walk = (steps) => steps.forEach((s) => (s.outcome === 'logged' && logged.push(s), walk(s.trace || [])));
    walk(home.trace);
    if (logged.length > 0) assert.match(decision[1], /logged by /);
    else if (!/anomaly score/.test(decision[1])) assert.equal(decision[1], 'Passed — no rule acted');
  });

  it('creates firewall rules: two calls (a filter reused the second time) and the single-call emergency form behind a warning', async function () {
    const zone = zones['business.example.com'];
    const expression = 'http.request.uri.path contains "/e2e-admin"';
    const one = await vscode.commands.executeCommand('rulesmith.createFirewallRule', { zone, expression, action: 'block', description: 'e2e two-call', mode: 'two-call' });
    assert.ok(one, JSON.stringify(api.testing.peek()));
    assert.equal(one.filterReused, false);
    assert.equal(one.rule.action, 'block');
    const two = await vscode.commands.executeCommand('rulesmith.createFirewallRule', { zone, expression, action: 'challenge', description: 'e2e reuse', mode: 'two-call' });
    assert.ok(two, JSON.stringify(api.testing.peek()));
    assert.equal(two.filterReused, true);
    assert.equal(two.filter.id, one.filter.id);

    api.testing.answer('Create Anyway');
    const single = await vscode.commands.executeCommand('rulesmith.createFirewallRule', { zone, expression: 'http.request.uri.path contains "/e2e-emergency"', action: 'block', description: 'e2e single-call', mode: 'single-call' });
    assert.ok(single, JSON.stringify(api.testing.peek()));
    assert.equal(single.rule.filter.expression, 'http.request.uri.path contains "/e2e-emergency"');
    const warned = api.testing.take().find((a) => a.kind === 'confirm');
    assert.match(warned.detail, /emergency form.*cannot be changed or deleted/);

    const bad = await vscode.commands.executeCommand('rulesmith.createFirewallRule', { zone, expression: 'http.request.uri.pth eq "/"', action: 'block', mode: 'two-call' });
    assert.equal(bad, undefined);
    assert.match(api.testing.take().find((a) => a.kind === 'error').message, /^The expression has an error: /);

    await vscode.commands.executeCommand('rulesmith.chooseZone', zone);
    const sections = await kids(api.views.firewall);
    const rules = await kids(api.views.firewall, sections[0].node);
    assert.ok(rules.some((r) => r.label === 'e2e two-call' && /block · priority/.test(r.description)), JSON.stringify(rules.map((r) => [r.label, r.description])));
    const filters = await kids(api.views.firewall, sections[1].node);
    assert.ok(filters.some((f) => f.label === 'e2e two-call' && /used by 2 rules/.test(f.description)), JSON.stringify(filters.map((r) => [r.label, r.description])));
  });

  it('pauses and resumes a firewall rule and changes its priority from the Firewall Rules view (PUT of the whole rule, PATCH of the priority)', async function () {
    const zone = zones['business.example.com'];
    await vscode.commands.executeCommand('rulesmith.chooseZone', zone);
    const ruleItems = async () => kids(api.views.firewall, (await kids(api.views.firewall))[0].node);
    const find = async (label) => (await ruleItems()).find((r) => r.label === label);
    const before = await find('e2e two-call');
    assert.ok(before, JSON.stringify((await ruleItems()).map((r) => r.label)));
    assert.equal(before.item.contextValue, 'firewallRule');

    api.testing.take();
    // Pausing a live rule asks first (as the paranoia change does); Cancel changes nothing.
    api.testing.answer(undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.pauseFirewallRule', before.node), undefined);
    const cancelled = api.testing.take().find((a) => a.kind === 'confirm');
    assert.equal(cancelled.message, 'Pause the firewall rule “e2e two-call” on business.example.com?');
    assert.equal(cancelled.detail, 'The rule acts on requests (block) now; paused, it stops right away, for all traffic of the zone, until resumed.');
    assert.deepEqual(cancelled.items, ['Pause']);
    assert.doesNotMatch((await find('e2e two-call')).description, /paused/);
    api.testing.answer('Pause');
    const paused = await vscode.commands.executeCommand('rulesmith.pauseFirewallRule', before.node);
    assert.ok(paused && paused.changed, JSON.stringify(api.testing.peek()));
    assert.equal(paused.rule.paused, true);
    // Nothing else of the rule changed (the PUT sends the whole rule as the zone has it).
    for (const k of ['action', 'description', 'priority']) assert.deepEqual(paused.rule[k], before.node.rule[k], k);
    assert.equal(paused.rule.filter.id, before.node.rule.filter.id);
    const shown = api.testing.take();
    assert.ok(shown.some((a) => a.kind === 'progress' && /pausing the firewall rule on business\.example\.com/.test(a.message)), JSON.stringify(shown));
    assert.ok(shown.some((a) => a.kind === 'info' && /^Paused the firewall rule “e2e two-call” on business\.example\.com: it no longer acts on requests until resumed\.$/.test(a.message)), JSON.stringify(shown));
    const item = await find('e2e two-call');
    assert.match(item.description, /^paused · block · priority/);
    assert.equal(item.item.contextValue, 'firewallRule.paused', 'the view offers Resume, not Pause');

    const again = await vscode.commands.executeCommand('rulesmith.pauseFirewallRule', item.node);
    assert.equal(again.changed, false);
    assert.match(api.testing.take().find((a) => a.kind === 'info').message, /is already paused/);
    const resumed = await vscode.commands.executeCommand('rulesmith.resumeFirewallRule', item.node);
    assert.equal(resumed.rule.paused, false);
    assert.doesNotMatch((await find('e2e two-call')).description, /paused/);

    // Priority: typed into the input box (prefilled with the current one), then by argument; empty is "none".
    api.testing.answer('1');
    const first = await vscode.commands.executeCommand('rulesmith.setFirewallRulePriority', (await find('e2e reuse')).node);
    assert.ok(first && first.changed, JSON.stringify(api.testing.peek()));
    assert.equal(first.rule.priority, 1);
    const asked = api.testing.take();
    assert.ok(asked.some((a) => a.kind === 'input' && /^Priority of the firewall rule “e2e reuse”$/.test(a.message)), JSON.stringify(asked));
    assert.ok(asked.some((a) => a.kind === 'info' && /has priority 1 \(was (none|\d+)\); it is now number 1 of \d+ in evaluation order/.test(a.message)), JSON.stringify(asked));
    const order = await ruleItems();
    assert.equal(order[0].label, 'e2e reuse', JSON.stringify(order.map((r) => [r.label, r.description])));
    assert.match(order[0].description, /challenge · priority 1$/);
    // From the palette: the rule is picked from the zone's list; a bad value is refused.
    api.testing.answer('e2e reuse', 'not a number');
    assert.equal(await vscode.commands.executeCommand('rulesmith.setFirewallRulePriority'), undefined);
    api.testing.answer('e2e reuse', '');
    const none = await vscode.commands.executeCommand('rulesmith.setFirewallRulePriority');
    assert.equal(none.rule.priority, null);
    assert.match((await find('e2e reuse')).description, /^challenge · priority none$/);
  });

  it('the firewall view lists 201 firewall rules of firewall.example.com in priority order', async function () {
    await vscode.commands.executeCommand('rulesmith.chooseZone', zones['firewall.example.com']);
    const sections = await kids(api.views.firewall);
    assert.equal(sections[0].description, '201');
    assert.equal(api.views.firewall.treeView.description, 'firewall.example.com', 'the view says whose rules it shows');
    const rules = await kids(api.views.firewall, sections[0].node);
    const pri = rules.map((r) => r.node.rule && r.node.rule.priority).filter((p) => typeof p === 'number');
    assert.deepEqual(pri, [...pri].sort((a, b) => a - b));
  });

  it('previews paranoia levels over the CRS regression requests and the workspace .http files (PL × threshold matrix and chart)', async function () {
    // The harness's user settings point rulesmith.preview.attackCorpus at the CRS 3.3.4
    // regression tests and keep 300 of their requests.
    {
      const r = await vscode.commands.executeCommand('rulesmith.previewParanoia');
      assert.ok(r, JSON.stringify(api.testing.peek()));
      const [attacks, own] = r.sets;
      assert.equal(attacks.name, 'Attacks');
      assert.equal(attacks.total, 300);
      assert.ok(attacks.available > 2000, String(attacks.available));
      const acted = (set, level, t) => set.preview.levels[level - 1].cells.find((c) => c.threshold === t).actedOn;
      // More rules and a lower threshold never act on fewer requests.
      assert.ok(acted(attacks, 4, 25) >= acted(attacks, 1, 25));
      assert.ok(acted(attacks, 2, 25) >= acted(attacks, 2, 60));
      assert.ok(acted(attacks, 4, 5) > 0);
      assert.equal(own.name, 'Your requests');
      assert.ok(own.total >= 2);
      assert.match(r.html, /<table class="matrix">/);
      assert.match(r.html, /<svg /);
    }
  });
});
