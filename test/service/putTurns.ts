// What the tests of large ruleset writes share: a numbered rule, and a hook in the turns a
// PUT lets other requests in (RouteServices.nextTurn: call 1 comes before the PUT stages its
// rows, calls 2 and on while it stages, docs/service.md "Session 25: staged writes").
import type { TestService } from './harness';

/** Rule `i` of a test ruleset, its `edit`-th version (ref `rule-i`). */
export function rule(i: number, edit = 0): Record<string, unknown> {
  return {
    action: 'block',
    expression: `(http.request.uri.path wildcard "/app-${i}/*" and ip.src in {192.0.2.0/24}) or http.host eq "h${i}-${edit}.example.com"`,
    description: `Rule ${i} (edit ${edit})`,
    ref: `rule-${i}`,
  };
}

/** Runs `run` with `hook(call)` after each turn a route of `svc` waits for, then takes the hook away. */
export async function duringTurns<T>(svc: TestService, hook: (call: number) => void | Promise<void>, run: () => Promise<T>): Promise<T> {
  const service = svc.running.service as { nextTurn(): Promise<void> };
  const own = service.nextTurn;
  let calls = 0;
  service.nextTurn = async () => {
    calls++;
    await own();
    await hook(calls);
  };
  try {
    return await run();
  } finally {
    service.nextTurn = own;
  }
}
