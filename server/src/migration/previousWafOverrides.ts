/**
 * A zone's URI-based overrides of the previous WAF (rules-api §5.4, Enterprise, API only):
 * the pure functions behind their API. They live in the zone's `ZoneWafSettings`; the
 * HTTP layer stores what these return and pages the list.
 */
import { charLength, longerThan } from '../language/bytes';
import { fail, invalidValue, isRecord, migrationError, notFound, unknownFieldError, type Result } from './errors';
import { findGroupDef, findRuleDef, OVERRIDE_PRIORITY_MAX, OVERRIDE_PRIORITY_MIN, OVERRIDE_VALUES, REWRITE_ACTION_KEYS, type OverrideValue } from './previousWafContent';
import type { List, UriOverride, ZoneWafSettings } from './previousWafSettings';

const OVERRIDE_FIELDS = ['id', 'description', 'urls', 'priority', 'paused', 'groups', 'rules', 'rewrite_action'] as const;

/**
 * Limits of URI-based overrides. The hosted reference gives `description` at most 1024
 * characters and `priority` its range, but no figure for these; a zone's overrides are one
 * JSON document rewritten on every change, so without them a zone could grow past what the
 * store can write (10 POSTs of 7 MB made 70 MB rewritten per call). At these caps an
 * override is at most ~27 KB and a zone's overrides ~27 MB.
 */
export const MAX_OVERRIDES_PER_ZONE = 1000;
export const MAX_OVERRIDE_URLS = 50;
export const MAX_OVERRIDE_URL_LENGTH = 500;
export const MAX_OVERRIDE_DESCRIPTION = 1024;

/** GET /zones/{zone_id}/firewall/waf/overrides: by priority, lowest first (paged by the caller). */
export function listOverrides(settings: ZoneWafSettings): List<UriOverride> {
  const sorted = (settings.overrides ?? []).map((o, i) => ({ o, i })).sort((a, b) => a.o.priority - b.o.priority || a.i - b.i).map((e) => e.o);
  return { result: sorted };
}

export function getOverride(settings: ZoneWafSettings, id: string): Result<{ result: UriOverride }> {
  const o = (settings.overrides ?? []).find((x) => x.id === id);
  if (!o) return fail(notFound(`URI-based override ${id}`));
  return { ok: true, result: o };
}

/**
 * Validates an override body. `urls` is always required; on PUT (`replace`) `rules` and
 * `rewrite_action` are required too and `id`, when sent, must match. Keys of `groups` must
 * be group ids and keys of `rules` rule ids of the zone's packages.
 */
export function validateOverrideBody(body: unknown, mode: 'create' | 'replace', id?: string): Result<{ value: Omit<UriOverride, 'id'> }> {
  if (!isRecord(body)) return fail(migrationError('invalid-value', 'the request body must be a JSON object with "urls" (required), and "rules", "groups", "rewrite_action", "priority", "paused", "description"', ''));
  const unknown = unknownFieldError(body, OVERRIDE_FIELDS, `an override accepts ${OVERRIDE_FIELDS.join(', ')}`);
  if (unknown) return fail(unknown);
  if (mode === 'replace' && body.id !== undefined && body.id !== id) return fail(invalidValue('id', body.id, `it must be the id in the URL (${id})`));
  if (mode === 'create' && body.id !== undefined) return fail(invalidValue('id', body.id, 'the id of a new override is assigned by the service'));
  const required = mode === 'replace' ? (['urls', 'rules', 'rewrite_action'] as const) : (['urls'] as const);
  for (const f of required) {
    if (body[f] === undefined) return fail(migrationError('missing-field', `${f} is required${mode === 'replace' ? ' when replacing an override (PUT needs urls, rules and rewrite_action)' : ': a list of URL patterns such as ["shop.example.com/*"]'}`, `/${f}`));
  }
  const urls = body.urls;
  if (!Array.isArray(urls) || urls.length === 0) return fail(invalidValue('urls', urls, 'it must be a non-empty list of URL patterns such as ["shop.example.com/*"]'));
  // Sizes before contents, and without quoting what is too large.
  if (urls.length > MAX_OVERRIDE_URLS) {
    return fail(migrationError('invalid-value', `a list of ${urls.length} URL patterns is not a valid value for urls because an override has at most ${MAX_OVERRIDE_URLS} URL patterns`, '/urls'));
  }
  for (let i = 0; i < urls.length; i++) {
    const url = urls[i] as unknown;
    if (typeof url === 'string' && longerThan(url, MAX_OVERRIDE_URL_LENGTH)) {
      return fail(migrationError('invalid-value', `a URL pattern of ${charLength(url)} characters is not a valid value for urls because a URL pattern is at most ${MAX_OVERRIDE_URL_LENGTH} characters`, `/urls/${i}`));
    }
    if (typeof url !== 'string' || url.trim() === '') return fail(invalidValue('urls', url, 'every URL pattern must be a non-empty string such as "shop.example.com/*"', `/urls/${i}`));
    if (url.includes('\u0000')) return fail(invalidValue('urls', url, 'a URL pattern must not contain a NUL character (U+0000)', `/urls/${i}`));
  }
  if (body.description !== undefined && body.description !== null) {
    if (typeof body.description === 'string' && longerThan(body.description, MAX_OVERRIDE_DESCRIPTION)) {
      return fail(migrationError('invalid-value', `a description of ${charLength(body.description)} characters is not a valid value for description because it must be a string of at most ${MAX_OVERRIDE_DESCRIPTION} characters (or null)`, '/description'));
    }
    if (typeof body.description !== 'string') return fail(invalidValue('description', body.description, `it must be a string of at most ${MAX_OVERRIDE_DESCRIPTION} characters (or null)`));
    if (body.description.includes('\u0000')) return fail(invalidValue('description', body.description, 'it must not contain a NUL character (U+0000)'));
  }
  if (body.priority !== undefined && (typeof body.priority !== 'number' || !Number.isInteger(body.priority) || body.priority < OVERRIDE_PRIORITY_MIN || body.priority > OVERRIDE_PRIORITY_MAX)) {
    return fail(invalidValue('priority', body.priority, `it must be an integer from ${OVERRIDE_PRIORITY_MIN} to ${OVERRIDE_PRIORITY_MAX} (lower runs first)`));
  }
  if (body.paused !== undefined && typeof body.paused !== 'boolean') return fail(invalidValue('paused', body.paused, 'it must be true or false'));
  const maps: Record<string, Record<string, OverrideValue>> = {};
  for (const field of ['groups', 'rules', 'rewrite_action'] as const) {
    const v = body[field];
    if (v === undefined) {
      maps[field] = {};
      continue;
    }
    if (!isRecord(v)) return fail(invalidValue(field, v, `it must be an object mapping ${field === 'groups' ? 'group ids' : field === 'rules' ? 'rule ids' : `actions (${REWRITE_ACTION_KEYS.join(', ')})`} to one of: ${OVERRIDE_VALUES.join(', ')}`));
    for (const [k, val] of Object.entries(v)) {
      const pointer = `/${field}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (field === 'groups' && !findGroupDef(k)) return fail(invalidValue('groups', k, 'it is not the id of a rule group of this zone\'s WAF packages', pointer));
      if (field === 'rules' && !findRuleDef(k)) return fail(invalidValue('rules', k, 'it is not the id of a rule of this zone\'s WAF packages', pointer));
      if (field === 'rewrite_action' && !(REWRITE_ACTION_KEYS as readonly string[]).includes(k)) {
        return fail(invalidValue('rewrite_action', k, `its keys must be actions: ${REWRITE_ACTION_KEYS.join(', ')}`, pointer));
      }
      if (!(OVERRIDE_VALUES as readonly unknown[]).includes(val)) return fail(invalidValue(field, val, `the value for ${k} must be one of: ${OVERRIDE_VALUES.join(', ')}`, pointer));
    }
    maps[field] = v as Record<string, OverrideValue>;
  }
  return {
    ok: true,
    value: {
      description: (body.description as string | null | undefined) ?? null,
      urls: urls as string[],
      priority: (body.priority as number | undefined) ?? 1,
      paused: (body.paused as boolean | undefined) ?? false,
      groups: maps.groups,
      rules: maps.rules,
      rewrite_action: maps.rewrite_action,
    },
  };
}

/** POST /firewall/waf/overrides; `id` is minted by the caller (32 hex). */
export function createOverride(settings: ZoneWafSettings, body: unknown, id: string): Result<{ settings: ZoneWafSettings; result: UriOverride }> {
  const count = (settings.overrides ?? []).length;
  if (count >= MAX_OVERRIDES_PER_ZONE) {
    return fail(
      migrationError('invalid-value', `the zone has ${count} URI-based overrides, the most a zone may have (${MAX_OVERRIDES_PER_ZONE}): delete one, or add its URL patterns to an override with the same rules, before creating another`, ''),
    );
  }
  const v = validateOverrideBody(body, 'create');
  if (!v.ok) return v;
  const o: UriOverride = { id, ...v.value };
  return { ok: true, settings: { ...settings, overrides: [...(settings.overrides ?? []), o] }, result: o };
}

/** PUT /firewall/waf/overrides/{id}: replaces the override (omitted optional fields reset). */
export function updateOverride(settings: ZoneWafSettings, id: string, body: unknown): Result<{ settings: ZoneWafSettings; result: UriOverride }> {
  const existing = getOverride(settings, id);
  if (!existing.ok) return existing;
  const v = validateOverrideBody(body, 'replace', id);
  if (!v.ok) return v;
  const o: UriOverride = { id, ...v.value };
  return { ok: true, settings: { ...settings, overrides: (settings.overrides ?? []).map((x) => (x.id === id ? o : x)) }, result: o };
}

/** DELETE /firewall/waf/overrides/{id} → `{id}`. */
export function deleteOverride(settings: ZoneWafSettings, id: string): Result<{ settings: ZoneWafSettings; result: { id: string } }> {
  const existing = getOverride(settings, id);
  if (!existing.ok) return existing;
  return { ok: true, settings: { ...settings, overrides: (settings.overrides ?? []).filter((x) => x.id !== id) }, result: { id } };
}
