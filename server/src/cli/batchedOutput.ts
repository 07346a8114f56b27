/**
 * The output of `rulesmith serve`: among others a line per API request and per proxied
 * request a rule acted on. Node writes stdout synchronously when it is a pipe, a file or a
 * terminal, so a write per line was a system call per request (13% of the API's GET
 * throughput, measured with test/bench/service.bench.ts). What is written in one turn of
 * the event loop goes out together at the end of the turn, in order; `flush()` writes what
 * waits at once (before the process says it stopped). A turn that writes more than
 * MAX_PENDING characters sends them then, so the wait never holds more than that.
 */
const MAX_PENDING = 64 * 1024;

export interface BatchedOutput {
  /** Queues `text` (lines with their newlines). */
  write(text: string): void;
  /** Writes what is queued now. */
  flush(): void;
}

export function batchedOutput(out: (text: string) => void): BatchedOutput {
  let pending: string[] = [];
  let size = 0;
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    size = 0;
    out(text);
  };
  return {
    write(text) {
      pending.push(text);
      size += text.length;
      if (size >= MAX_PENDING) flush();
      else scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
