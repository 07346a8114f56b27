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
 * The nice value. While the thread and one at 0 both want the CPU, CFS gives it about a
 * third of the other's weight, and a request thread that wakes up preempts it; a core that
 * is otherwise idle it gets whole. Not higher: under a saturating load the events writer
 * still needs about a tenth of a core to keep up (about 30 µs per event, a few thousand
 * events a second), and writer.ts drops what it cannot queue.
 */
export const BACKGROUND_NICE = 5;

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
