/**
 * Every request handler runs through `runSafe`: a bug in one feature logs its stack to
 * the client's output channel and answers with an empty result, instead of an error
 * popup per keystroke or a dead server. Cancellation is checked before the work (after
 * yielding once, so that a `$/cancelRequest` already on the wire is seen) and after it.
 */
import { LSPErrorCodes, ResponseError, type CancellationToken, type Connection } from 'vscode-languageserver/node';

export type Logger = Pick<Connection['console'], 'error'>;

function cancelled(): ResponseError<void> {
  return new ResponseError<void>(LSPErrorCodes.RequestCancelled, 'Request cancelled');
}

/** Runs a request handler; `empty` is the answer when it throws. */
export function runSafe<T>(
  log: Logger,
  what: string,
  token: CancellationToken | undefined,
  empty: T,
  work: () => T | Promise<T>,
): Promise<T | ResponseError<void>> {
  return new Promise((resolve) => {
    setImmediate(() => {
      if (token?.isCancellationRequested) return resolve(cancelled());
      let result: T | Promise<T>;
      try {
        result = work();
      } catch (e) {
        log.error(`${what} failed: ${describe(e)}`);
        return resolve(empty);
      }
      Promise.resolve(result).then(
        (value) => resolve(token?.isCancellationRequested ? cancelled() : value),
        (e: unknown) => {
          log.error(`${what} failed: ${describe(e)}`);
          resolve(empty);
        },
      );
    });
  });
}

/** Runs a notification handler: errors are logged, never thrown into the connection. */
export function runSafeNotification(log: Logger, what: string, work: () => void | Promise<void>): void {
  try {
    const r = work();
    if (r) r.catch((e: unknown) => log.error(`${what} failed: ${describe(e)}`));
  } catch (e) {
    log.error(`${what} failed: ${describe(e)}`);
  }
}

export function describe(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}
