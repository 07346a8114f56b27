/**
 * The store's schema, one entry per version (`PRAGMA user_version` counts the entries
 * applied). Never edit a released entry: add a new one that alters the tables.
 *
 * API objects whose shape the service only passes through (ruleset versions, previous-WAF
 * settings, migration state) are kept as JSON documents next to the keys that queries
 * and constraints need. Ruleset versions are the exception since schema 2: rule rows
 * (rulesetHistory.ts), so a version costs what changed.
 */
import { inlineRuleBodies, migrateToRuleRows } from './rulesetHistory';
import type { SqlStore } from './sqlStore';

/** SQL, or a step that moves data (run in the step's transaction). */
export type SchemaStep = string | ((store: SqlStore) => void);

export const SCHEMA: readonly SchemaStep[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, created_on TEXT NOT NULL);
  CREATE TABLE users (
    id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, api_key_hash TEXT NOT NULL);
  CREATE TABLE account_members (
    account_id TEXT NOT NULL REFERENCES accounts(id), user_id TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (account_id, user_id));
  CREATE TABLE zones (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL, status TEXT NOT NULL, created_on TEXT NOT NULL,
    page_rules TEXT NOT NULL DEFAULT '[]');
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    policies TEXT NOT NULL, issued_on TEXT NOT NULL, not_before TEXT, expires_on TEXT);
  CREATE TABLE rulesets (
    id TEXT PRIMARY KEY, scope TEXT NOT NULL CHECK (scope IN ('account', 'zone')), scope_id TEXT NOT NULL,
    kind TEXT NOT NULL, phase TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
    version INTEGER NOT NULL, last_updated TEXT NOT NULL);
  CREATE UNIQUE INDEX rulesets_one_entry_point ON rulesets (scope, scope_id, phase) WHERE kind IN ('root', 'zone');
  CREATE TABLE ruleset_versions (
    ruleset_id TEXT NOT NULL REFERENCES rulesets(id) ON DELETE CASCADE, version INTEGER NOT NULL,
    last_updated TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (ruleset_id, version));
  CREATE TABLE filters (
    id TEXT PRIMARY KEY, zone_id TEXT NOT NULL REFERENCES zones(id), expression TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0, description TEXT NOT NULL DEFAULT '', ref TEXT NOT NULL DEFAULT '',
    single_call INTEGER NOT NULL DEFAULT 0, created_on TEXT NOT NULL, modified_on TEXT NOT NULL);
  CREATE TABLE firewall_rules (
    id TEXT PRIMARY KEY, zone_id TEXT NOT NULL REFERENCES zones(id), filter_id TEXT NOT NULL,
    action TEXT NOT NULL, priority INTEGER, paused INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL DEFAULT '', ref TEXT NOT NULL DEFAULT '', products TEXT NOT NULL DEFAULT '[]',
    seq INTEGER NOT NULL, created_on TEXT NOT NULL, modified_on TEXT NOT NULL);
  CREATE INDEX firewall_rules_zone ON firewall_rules (zone_id, seq);
  CREATE TABLE previous_waf (zone_id TEXT PRIMARY KEY REFERENCES zones(id), settings TEXT NOT NULL);
  CREATE TABLE waf_migration (zone_id TEXT PRIMARY KEY REFERENCES zones(id), state TEXT NOT NULL);
  `,
  // 2: ruleset versions as rule rows keyed by content hash (rulesetHistory.ts).
  migrateToRuleRows,
  // 3: a rule row holds its body, keyed for writes (rulesetHistory.ts).
  inlineRuleBodies,
  // 4: a ruleset's row holds only what never changes, so a new version writes no row of it:
  // its name, description, version and time are its newest version row's. `version_floor`
  // keeps a deleted newest version's number from being given again (rulesetStore.ts).
  `
  ALTER TABLE rulesets DROP COLUMN name;
  ALTER TABLE rulesets DROP COLUMN description;
  ALTER TABLE rulesets DROP COLUMN last_updated;
  ALTER TABLE rulesets RENAME COLUMN version TO version_floor;
  `,
  // 5: a zone's filters and a scope's rulesets found by index: listing them (and a zone's
  // deployment key, on the proxy's thread after each write) read every zone's rows before.
  `
  CREATE INDEX filters_zone ON filters (zone_id);
  CREATE INDEX rulesets_scope ON rulesets (scope, scope_id);
  `,
];
