import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { describeRule, shortId } from '../../../server/src/rulesets/ruleNames';

const ID = '0123456789abcdef0123456789abcdef';

test('short: the ref, else the CRS number, else the description quoted and clipped, else the id cut', () => {
  assert.equal(describeRule({ ref: 'block-admin', ruleId: ID, description: 'Block admin' }, 'short'), 'block-admin');
  assert.equal(describeRule({ ref: ID, description: '949110: Inbound Anomaly Score Exceeded' }, 'short'), '949110');
  assert.equal(describeRule({ ruleId: ID, description: 'Block admin' }, 'short'), '"Block admin"');
  assert.equal(describeRule({ description: 'x'.repeat(60) }, 'short'), `"${'x'.repeat(47)}…"`);
  assert.equal(describeRule({ ruleId: ID }, 'short'), '01234567…');
  assert.equal(describeRule({ ruleId: 'r1' }, 'short'), 'r1');
  assert.equal(describeRule({}, 'short'), undefined);
});

test('short: the built-in managed rulesets prefix their rules', () => {
  assert.equal(describeRule({ rulesetId: VENDOR_RULESET_ID, ref: 'log4shell-uri' }, 'short'), 'vendor:log4shell-uri');
  assert.equal(describeRule({ rulesetId: OWASP_RULESET_ID, ref: ID, description: '920350: Host header is a numeric IP address' }, 'short'), 'owasp:920350');
  assert.equal(describeRule({ rulesetId: ID, ref: 'mine' }, 'short'), 'mine');
});

test('full: every handle, the ref left out when it is the id', () => {
  assert.equal(describeRule({ ref: 'block-admin', ruleId: ID, description: 'Block admin' }, 'full'), `block-admin id ${ID} "Block admin"`);
  assert.equal(describeRule({ ref: ID, ruleId: ID }, 'full'), `id ${ID}`);
  assert.equal(describeRule({ ref: 'sk' }, 'full'), 'sk');
  assert.equal(describeRule({}, 'full'), undefined);
});

test('handle: the id, else the ref, else the description', () => {
  assert.equal(describeRule({ ref: 'block-admin', ruleId: ID, description: 'Block admin' }, 'handle'), ID);
  assert.equal(describeRule({ ref: 'block-admin', description: 'Block admin' }, 'handle'), 'block-admin');
  assert.equal(describeRule({ description: 'Block admin' }, 'handle'), 'Block admin');
});

test('title: the description, else what it runs, else its expression clipped, else its ref, else its position', () => {
  assert.equal(describeRule({ description: '  Block admin ', expression: 'true', index: 0 }, 'title'), 'Block admin');
  assert.equal(describeRule({ description: ' ', executes: 'Cloudflare Managed Ruleset', expression: 'true' }, 'title'), 'Execute Cloudflare Managed Ruleset');
  assert.equal(describeRule({ expression: `http.host eq "${'a'.repeat(60)}"`, ref: 'r' }, 'title'), `http.host eq "${'a'.repeat(45)}…`);
  assert.equal(describeRule({ ref: 'r', index: 2 }, 'title'), 'r');
  assert.equal(describeRule({ index: 2 }, 'title'), 'Rule 3');
});

test('shortId cuts only 32-digit hex ids', () => {
  assert.equal(shortId(ID), '01234567…');
  assert.equal(shortId('block-admin'), 'block-admin');
});
