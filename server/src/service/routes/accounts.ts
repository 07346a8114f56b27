/**
 * `GET /accounts`, `GET /zones`, `GET /zones/{id}` and token verification: what the
 * caller's credentials may see (the extension's zone explorer lists from these).
 */
import type { Account } from '../../rulesApi';
import { ApiError, CODES, paginate, type Reply } from '../api';
import { bearerOf, findToken, tokenStatus, visible } from '../auth';
import type { Ctx, Router } from '../router';
import { ZONE_SELECT, zoneObject, type AccountRow, type ZoneRow } from '../scope';
import { existingAccount, requireZone, zoneVisible } from '../scopeAccess';

export function accountRoutes(r: Router): void {
  r.get('/accounts', (ctx) => {
    const accounts = ctx.service.store.all<AccountRow>('SELECT id, name, created_on FROM accounts ORDER BY name, id');
    const name = ctx.query.get('name');
    const list = accounts
      .filter((a) => accountVisible(ctx, a.id))
      .filter((a) => name === null || a.name.toLowerCase().includes(name.toLowerCase()))
      .map(accountObject);
    return paginate(list, ctx.query, { defaultPerPage: 20, min: 5, max: 50 });
  });

  // `cf.accounts.get({account_id})`: an account the credentials may see (as in the list), else 10000.
  r.get('/accounts/:account_id', (ctx) => {
    const a = existingAccount(ctx, ctx.params.account_id!);
    if (!accountVisible(ctx, a.id)) throw ApiError.of(403, CODES.authenticationError, 'Authentication error');
    return { result: accountObject(a) };
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

/** An account the credentials see: granted on it, or on one of its zones. */
function accountVisible(ctx: Ctx, accountId: string): boolean {
  if (visible(ctx.principal, { accountId })) return true;
  return ctx.service.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.account_id = ?`, [accountId]).some((z) => zoneVisible(ctx, z));
}

function accountObject(a: AccountRow): Account & Readonly<Record<string, unknown>> {
  return { id: a.id, name: a.name, type: 'standard', settings: { enforce_twofactor: false }, created_on: a.created_on };
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
