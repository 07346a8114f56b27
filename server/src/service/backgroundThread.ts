/**
 * Threads whose work can wait (the security events' writer, the store's checkpoints) run at
 * a lower scheduling priority than the threads that answer requests. Each wakes up to do a
 * few milliseconds of SQLite work at once (a commit, a checkpoint); on a machine of two cores
 * that burst took a core from the WAF proxy's threads just when a request needed it.
 * Linux gives each thread its own nice value: a thread finds its id in /proc/thread-self and
 * raises its own (which needs no privilege). Elsewhere nothing changes.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * How many nice levels below the request threads. While such a thread and a request thread
 * both want the CPU, CFS gives it about a third of the other's weight, and a request thread
 * that wakes up preempts it; a core that is otherwise idle it gets whole. Not more: under a
 * saturating load the events writer still needs about a tenth of a core to keep up (about
 * 30 µs per event, a few thousand events a second), and writer.ts drops what it cannot queue.
 */
export const BACKGROUND_NICE = 5;

/**
 * The calling thread's Linux thread id, from this process's own /proc entry (where /proc
 * belongs to another PID namespace its numbers would name other processes); undefined
 * elsewhere.
 */
export function threadId(): number | undefined {
  try {
    const m = /^(\d+)\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m && Number(m[1]) === process.pid ? Number(m[2]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers the calling thread's priority by BACKGROUND_NICE from what it has (the process's,
 * inherited: a service started with `nice -n 10` puts its background threads at 15, not back
 * at 5), at most to 19; returns whether it could.
 */
export function runInBackground(): boolean {
  const tid = threadId();
  if (tid === undefined) return false;
  try {
    const now = getPriority(tid);
    if (now >= 19) return false;
    setPriority(tid, Math.min(19, now + BACKGROUND_NICE));
    return true;
  } catch {
    return false;
  }
}
