/**
 * `POST /client/v4/graphql`: the GraphQL Analytics endpoint (events/graphql.ts). It answers in
 * GraphQL's shape, `{data, errors}`, not the v4 envelope: credentials the API refuses are
 * GraphQL errors with the API's status and code; everything else is HTTP 200 with the
 * GraphQL errors in `errors` (a request without a query document: 400).
 */
import { ApiError } from '../api';
import { authenticate } from '../auth';
import type { Reply } from '../api';
import type { Ctx, Router } from '../router';
import { runGraphql, type GraphqlRequest } from '../events/graphql';
import type { EventReader } from '../events/query';
import { EVENTS_SCOPE } from '../events/schema';

/** A service started without security events (tests of other routes, createService without them): no event to read. */
const NO_EVENTS: EventReader = { all: async () => [] };

export function graphqlRoutes(r: Router, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): void {
  r.post('/graphql', (ctx) => graphql(ctx, log), { public: true });
}

async function graphql(ctx: Ctx, log: (line: string) => void): Promise<Reply> {
  let principal;
  try {
    principal = authenticate(ctx.service.store, ctx.headers);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { status: e.status, raw: { data: null, errors: e.errors.map((x) => ({ message: x.message, extensions: { code: x.code } })) } };
  }
  // The events and the zones are all it reads: a pending ruleset write does not hold it.
  ctx.readScope = EVENTS_SCOPE;
  const body = ctx.body !== null && typeof ctx.body === 'object' && !Array.isArray(ctx.body) ? (ctx.body as GraphqlRequest) : {};
  const result = await runGraphql(ctx.service.store, ctx.service.events ?? NO_EVENTS, principal, body, (e) => log(`graphql internal error: ${e.stack ?? e}`));
  const requestError = result.data === undefined && (result.errors?.[0] as { extensions?: { code?: string } } | undefined)?.extensions?.code === 'BAD_REQUEST';
  return { status: requestError ? 400 : 200, raw: result };
}
