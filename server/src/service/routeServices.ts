/**
 * What a route handler reaches of the running service (`ctx.service`): the store, the
 * worker threads and the settings the routes read. service.ts's Service is this and what
 * only the HTTP layer reads; the routes name this, so no route imports service.ts, which
 * imports them all.
 */
import type { TracedRequestSink } from '../evaluatedRequest';
import type { EventReader } from './events/query';
import type { RuleChecker } from './ruleChecker';
import type { Store } from './store';
import type { TraceRunner } from './traceRunner';

export interface RouteServices {
  readonly store: Store;
  /** Trace evaluations, in a worker thread with a time limit. */
  readonly traces: TraceRunner;
  /** The checks of the rules a write brings, in a worker thread (ruleChecker.ts). */
  readonly ruleChecks: RuleChecker;
  /** Bytes of a traced body that are inspected, for zones without their own setting (routes/zoneSettings.ts; default DEFAULT_BODY_LIMIT). */
  readonly bodyLimit?: number;
  /** The security events: the sink for traces (it records nothing with `--events off`) and GraphQL's reader. */
  readonly events?: TracedRequestSink & EventReader;
  /**
   * Lets other requests in before the turn that writes a ruleset's whole list (a PUT):
   * resolves in a later turn of the event loop. Tests replace it to run a request there.
   */
  nextTurn(): Promise<void>;
}

/** RouteServices.nextTurn as the service runs it. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
