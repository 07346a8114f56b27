/**
 * Threads whose work can wait (the security events' writer, the store's checkpoints) run at
 * a lower scheduling priority than the threads that answer requests. Each wakes up to do a
 * few milliseconds of SQLite work at once (a commit, a checkpoint); on a machine of two cores
 * that burst took a core from the WAF proxy's threads just when a request needed it.
 * Linux gives each thread its own nice value: a thread finds its id in /proc/thread-self and
 * raises its own (which needs no privilege). Elsewhere nothing changes.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The nice value: CFS then gives the thread a tenth of the weight of one at 0 while both
 * want the CPU, and all of a core that is otherwise idle. Not 19: under a saturating load
 * the events writer still needs a few percent of a core to keep up (writer.ts drops what it
 * cannot queue).
 */
export const BACKGROUND_NICE = 10;

/** Lowers the calling thread's priority to BACKGROUND_NICE; returns whether it could. */
export function runInBackground(): boolean {
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    if (!(tid > 0)) return false;
    setPriority(tid, BACKGROUND_NICE);
    return true;
  } catch {
    return false;
  }
}
