// The API client a window keeps: another window signing in with another token for the same
// service URL (SecretStorage's onDidChange in this window) means a new client, so the
// next request carries the new token. Plain Node: the cache imports no vscode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientCache, sameCredentials } from '../../../client/src/api/clientCache';
import type { Credentials } from '../../../client/src/api/rulesApi';

const URL_A = 'https://api.example.com/client/v4';
const old: Credentials = { kind: 'token', token: 'old-token' };
const fresh: Credentials = { kind: 'token', token: 'new-token' };

/** A cache whose clients are the token they were made with, and how many were made. */
function cache() {
  const made: string[] = [];
  const c = new ClientCache<string>(['rulesmith.api.credentials']);
  const get = (key: string, creds: Credentials) =>
    c.get(key, creds, () => {
      const client = creds.kind === 'token' ? creds.token : `${creds.email}:${creds.key}`;
      made.push(client);
      return client;
    });
  return { c, get, made };
}

test('the same URL and credentials keep one client', () => {
  const { get, made } = cache();
  assert.equal(get(URL_A, old), 'old-token');
  assert.equal(get(URL_A, { kind: 'token', token: 'old-token' }), 'old-token');
  assert.deepEqual(made, ['old-token']);
});

test('another window stores a new token for the same URL: the secret change drops the client, the next request uses the new token', () => {
  const { c, get, made } = cache();
  assert.equal(get(URL_A, old), 'old-token');
  assert.equal(c.secretChanged('rulesmith.api.credentials'), true);
  assert.equal(get(URL_A, fresh), 'new-token');
  assert.deepEqual(made, ['old-token', 'new-token']);
});

test('a token read before the change event arrives is not sent with the old client either', () => {
  const { get, made } = cache();
  get(URL_A, old);
  assert.equal(get(URL_A, fresh), 'new-token');
  assert.deepEqual(made, ['old-token', 'new-token']);
});

test('a change to a secret the clients do not use keeps the client', () => {
  const { c, get, made } = cache();
  get(URL_A, old);
  assert.equal(c.secretChanged('rulesmith.localService.token'), false);
  assert.equal(get(URL_A, old), 'old-token');
  assert.deepEqual(made, ['old-token']);
});

test('another URL, or clear(), makes a new client', () => {
  const { c, get, made } = cache();
  get(URL_A, old);
  get('https://rules.internal.example/client/v4', old);
  c.clear();
  get('https://rules.internal.example/client/v4', old);
  assert.deepEqual(made, ['old-token', 'old-token', 'old-token']);
});

test('credentials compare by every field of their kind', () => {
  const key: Credentials = { kind: 'key', email: 'a@example.com', key: 'k1' };
  assert.equal(sameCredentials(key, { kind: 'key', email: 'a@example.com', key: 'k1' }), true);
  assert.equal(sameCredentials(key, { kind: 'key', email: 'a@example.com', key: 'k2' }), false);
  assert.equal(sameCredentials(key, { kind: 'key', email: 'b@example.com', key: 'k1' }), false);
  assert.equal(sameCredentials(old, key), false);
  assert.equal(sameCredentials(key, old), false);
});
