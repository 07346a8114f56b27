/**
 * `GET /accounts`, `GET /zones`, `GET /zones/{id}` and token verification: what the
 * caller's credentials may see (the extension's zone explorer lists from these).
 */
import { ApiError, CODES, paginate, type Reply } from '../api';
import { bearerOf, findToken, tokenStatus, visible } from '../auth';
import type { Ctx, Router } from '../router';
import { requireZone, ZONE_SELECT, zoneObject, zoneVisible, type AccountRow, type ZoneRow } from '../scope';

export function accountRoutes(r: Router): void {
  r.get('/accounts', (ctx) => {
    const accounts = ctx.service.store.all<AccountRow>('SELECT id, name, created_on FROM accounts ORDER BY name, id');
    const zones = ctx.service.store.all<ZoneRow>(`${ZONE_SELECT}`);
    const seen = accounts.filter(
      (a) => visible(ctx.principal, { accountId: a.id }) || zones.some((z) => z.account_id === a.id && zoneVisible(ctx, z)),
    );
    const name = ctx.query.get('name');
    const list = seen
      .filter((a) => name === null || a.name.toLowerCase().includes(name.toLowerCase()))
      .map((a) => ({ id: a.id, name: a.name, type: 'standard', settings: { enforce_twofactor: false }, created_on: a.created_on }));
    return paginate(list, ctx.query, { defaultPerPage: 20, min: 5, max: 50 });
  });

  r.get('/zones', (ctx) => {
    const name = ctx.query.get('name');
    const accountId = ctx.query.get('account.id');
    const status = ctx.query.get('status');
    const zones = ctx.service.store
      .all<ZoneRow>(`${ZONE_SELECT} ORDER BY z.name`)
      .filter((z) => zoneVisible(ctx, z))
      .filter((z) => name === null || z.name === name)
      .filter((z) => accountId === null || z.account_id === accountId)
      .filter((z) => status === null || z.status === status);
    return paginate(zones.map(zoneObject), ctx.query, { defaultPerPage: 20, min: 5, max: 50 });
  });

  r.get('/zones/:zone_id', (ctx) => ({ result: zoneObject(requireZone(ctx, ['Zone', 'Zone WAF', 'Firewall Services'], 'Read')) }));

  // Account-owned tokens verify at the account path; same answers.
  r.get('/user/tokens/verify', verifyToken, { public: true });
  r.get('/accounts/:account_id/tokens/verify', verifyToken, { public: true });
}

function verifyToken(ctx: Ctx): Reply {
  const token = bearerOf(ctx.headers);
  if (token === undefined) throw ApiError.of(400, CODES.missingCredentials, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers');
  const row = findToken(ctx.service.store, token);
  if (!row) throw ApiError.of(401, CODES.invalidApiToken, 'Invalid API Token');
  const status = tokenStatus(row);
  return {
    result: {
      id: row.id,
      status,
      ...(row.not_before ? { not_before: row.not_before } : {}),
      ...(row.expires_on ? { expires_on: row.expires_on } : {}),
    },
    messages: status === 'active' ? [{ code: 10000, message: 'This API Token is valid and active', type: null }] : [],
  };
}
