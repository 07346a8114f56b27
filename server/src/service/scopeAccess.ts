/**
 * The zone or account a route names (`:zone_id`, `:account_id`), checked against the
 * caller's permissions. Apart from the rows (scope.ts) because it takes the request's Ctx:
 * the rows are read under the routes too, where no request is.
 */
import { ApiError, CODES } from './api';
import { authorize, seesEverything, visible, type Access, type PermissionGroup } from './auth';
import type { Ctx } from './router';
import { accountRow, zoneRow, type AccountRow, type ZoneRow } from './scope';

/**
 * The zone of `:zone_id`, after checking the caller may use `groups` with `access` on it.
 * A missing zone is 404 only for credentials that reach every zone; for others it is the
 * same 403 as a zone they may not see, so another account's token cannot learn which
 * ids exist.
 */
export function requireZone(ctx: Ctx, groups: readonly PermissionGroup[], access: Access): ZoneRow {
  const id = ctx.params.zone_id!;
  const zone = zoneRow(ctx.service.store, id);
  if (!zone && !seesEverything(ctx.principal, 'zone')) notYours();
  if (!zone) {
    throw new ApiError(404, [{ code: CODES.badObjectId, message: `Could not route to /zones/${id}, perhaps your object identifier is invalid?` }]);
  }
  authorize(ctx.principal, { accountId: zone.account_id, zoneId: zone.id }, groups, access);
  return zone;
}

/**
 * The account `id`, or the answer for one that does not exist: to credentials that do not
 * reach every account, the same 403 as an account they may not see (as for zones), so ids
 * of other accounts do not leak; to the others, 404. Whether the caller may see it is the
 * caller's check.
 */
export function existingAccount(ctx: Ctx, id: string): AccountRow {
  const account = accountRow(ctx.service.store, id);
  if (!account && !seesEverything(ctx.principal, 'account')) notYours();
  if (!account) {
    throw new ApiError(404, [{ code: CODES.badObjectId, message: `Could not route to /accounts/${id}, perhaps your object identifier is invalid?` }]);
  }
  return account;
}

/** The account of `:account_id`, after the permission check (a missing one as for zones). */
export function requireAccount(ctx: Ctx, groups: readonly PermissionGroup[], access: Access): AccountRow {
  const account = existingAccount(ctx, ctx.params.account_id!);
  authorize(ctx.principal, { accountId: account.id }, groups, access);
  return account;
}

/** The answer to credentials that do not reach a zone or account, whether it exists or not. */
function notYours(): never {
  throw ApiError.of(403, CODES.authenticationError, 'Authentication error');
}

export function zoneVisible(ctx: Ctx, zone: Pick<ZoneRow, 'id' | 'account_id'>): boolean {
  return visible(ctx.principal, { accountId: zone.account_id, zoneId: zone.id });
}
