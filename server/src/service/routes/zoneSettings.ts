/**
 * A zone's request body inspection limit (issue 20): how many bytes of a request's body
 * become field values when the zone's rules evaluate it (the Trace here, the proxy), as a
 * WAF inspects a body's start. A Rulesmith setting in the shape of a zone setting:
 *
 *   GET   /zones/:zone_id/settings/request_body_inspection_limit
 *   PATCH /zones/:zone_id/settings/request_body_inspection_limit   {"value": 262144}
 *
 * answer `{"id", "value", "editable": true, "modified_on"}` (`modified_on` with microseconds, as
 * every timestamp of the service: api.ts timestamp()); `value` is a whole number of
 * bytes from 0 to 64 MiB (requests/body.ts). Unset, the zone uses the service's default
 * (`rulesmith serve --body-limit`, else 128 KiB) and `modified_on` is null. Permissions:
 * Zone WAF Read / Write. Kept in the `meta` table (one key per zone), so it needs no schema
 * change.
 */
import { DEFAULT_BODY_LIMIT, MAX_BODY_LIMIT } from '../../requests/body';
import { ApiError, CODES, timestamp } from '../api';
import type { RouteServices } from '../routeServices';
import type { Router } from '../router';
import type { Store } from '../store';
import { requireZone } from '../scopeAccess';

export const BODY_LIMIT_SETTING = 'request_body_inspection_limit';

const key = (zoneId: string): string => `zone_setting:${zoneId}:${BODY_LIMIT_SETTING}`;

interface Stored {
  readonly value: number;
  readonly modified_on: string;
}

function stored(store: Store, zoneId: string): Stored | undefined {
  const raw = store.meta(key(zoneId));
  return raw === undefined ? undefined : (JSON.parse(raw) as Stored);
}

/** The zone's own body inspection limit, if it has set one (the WAF proxy reads it as the trace does). */
export function zoneOwnBodyLimit(store: Store, zoneId: string): number | undefined {
  return stored(store, zoneId)?.value;
}

/** The body inspection limit for evaluating the zone's rules: its own setting, else the service's default. */
export function zoneBodyLimit(service: RouteServices, zoneId: string): number {
  return zoneOwnBodyLimit(service.store, zoneId) ?? service.bodyLimit ?? DEFAULT_BODY_LIMIT;
}

function settingObject(service: RouteServices, zoneId: string): Record<string, unknown> {
  const s = stored(service.store, zoneId);
  return { id: BODY_LIMIT_SETTING, value: s?.value ?? service.bodyLimit ?? DEFAULT_BODY_LIMIT, editable: true, modified_on: s?.modified_on ?? null };
}

export function zoneSettingRoutes(r: Router): void {
  const path = `/zones/:zone_id/settings/${BODY_LIMIT_SETTING}`;
  r.get(path, (ctx) => ({ result: settingObject(ctx.service, requireZone(ctx, ['Zone WAF'], 'Read').id) }));
  r.patch(path, (ctx) => {
    const zone = requireZone(ctx, ['Zone WAF'], 'Write');
    const body = ctx.body as { value?: unknown } | undefined;
    const value = body?.value;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_BODY_LIMIT) {
      throw ApiError.of(
        400,
        CODES.invalidValue,
        `${BODY_LIMIT_SETTING}: "value" must be a whole number of bytes from 0 to ${MAX_BODY_LIMIT} (64 MiB), e.g. {"value": ${DEFAULT_BODY_LIMIT}} for 128 KiB; got ${JSON.stringify(value ?? null)}`,
        '/value',
      );
    }
    ctx.service.store.setMeta(key(zone.id), JSON.stringify({ value, modified_on: timestamp() } satisfies Stored));
    return { result: settingObject(ctx.service, zone.id) };
  });
}
