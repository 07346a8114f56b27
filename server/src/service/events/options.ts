/**
 * `rulesmith serve --events-retention 7d --events-max-rows N`: how long and how many
 * security events the store keeps (writer.ts), and `--events on|off`. Parsed here so the
 * CLI adds the flags and a call each.
 */
import { DEFAULT_MAX_ROWS, DEFAULT_RETENTION_MS } from './eventsDb';
import type { SecurityEventsOptions } from './writer';

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `7d`, `12h`, `90m`, `3600s` → ms; an error message for anything else. */
export function parseRetention(text: string, flag = '--events-retention'): { ms: number } | { error: string } {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNITS[m[2]!]! : NaN;
  if (!m || !Number.isSafeInteger(ms) || ms <= 0) {
    return { error: `${flag} takes a positive duration with a unit: s, m, h or d (e.g. 7d, 12h), got "${text}"` };
  }
  return { ms };
}

export function parseMaxRows(text: string, flag = '--events-max-rows'): { rows: number } | { error: string } {
  const rows = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(rows) || rows < 1) return { error: `${flag} takes a whole number of events of at least 1, got "${text}"` };
  return { rows };
}

/**
 * `--events on|off` (default on): off, nothing the proxy or a trace evaluates is recorded
 * (the GraphQL API still answers, from what is stored). For measuring what recording costs
 * (test/bench/events.bench.ts) and for a proxy that must not write.
 */
export function eventsOn(value: string | boolean | undefined): { on: boolean } | { error: string } {
  if (value === undefined || value === 'on') return { on: true };
  if (value === 'off') return { on: false };
  return { error: `--events takes on or off, got "${String(value)}"` };
}

/** The writer's options from the two flags' values (undefined: the defaults, 7 days and 5,000,000 rows). */
export function eventsOptions(values: Readonly<Record<string, string | boolean | undefined>>): SecurityEventsOptions | { error: string } {
  let retentionMs = DEFAULT_RETENTION_MS;
  let maxRows = DEFAULT_MAX_ROWS;
  const r = values['events-retention'];
  if (r !== undefined) {
    const p = parseRetention(String(r));
    if ('error' in p) return p;
    retentionMs = p.ms;
  }
  const n = values['events-max-rows'];
  if (n !== undefined) {
    const p = parseMaxRows(String(n));
    if ('error' in p) return p;
    maxRows = p.rows;
  }
  return { retentionMs, maxRows };
}
