/**
 * Log lines that can repeat at will — the proxy's (connections closed at the limit, request
 * heads refused before a zone is picked, hosts under no proxied zone) and the security
 * events' dropped batches (one every 20 ms while the events file cannot be written): one
 * mechanism that bounds them, so a flood cannot flood the log.
 *
 * A window opens with the first line after a quiet one and lasts `windowMs`. Its first
 * `burst` lines are logged as they come, whole (ray id, target, reason: enough to see what
 * the flood is); the others are only counted, by key (the status), and when the window ends
 * one line says how many were left out:
 * `proxy: 4213 more refused request heads in the last 10 s (400: 4000, 505: 213)`.
 * So a lone line is always logged at once, and a flood costs at most `burst` + 1 lines per
 * window. The summary is written by a timer at the window's end (unref'd: it never holds the
 * process), or at once by `close()` (the proxy's close), so no count is lost when the flood
 * stops or the proxy does.
 */
import { performance } from 'node:perf_hooks';

export interface LogThrottleOptions {
  /** Lines logged whole per window. */
  readonly burst: number;
  readonly windowMs: number;
  /** The summary line for `count` lines left out over the last `seconds`; the throttle appends the count per key. */
  readonly summary: (count: number, seconds: number) => string;
  /** A monotonic clock in ms (performance.now by default); tests give a fake one. */
  readonly now?: () => number;
}

/** Keys counted apart in a summary; the rest are counted as `other`. */
const MAX_KEYS = 8;

export class LogThrottle {
  private windowStart = -Infinity;
  private logged = 0;
  private skipped = 0;
  private readonly byKey = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly log: (line: string) => void,
    private readonly options: LogThrottleOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Logs `text` unless this window has had its `burst` already; then counts it under `key`. */
  line(text: string, key?: string): void {
    const now = this.now();
    if (now - this.windowStart >= this.options.windowMs) {
      this.summarize(now);
      this.windowStart = now;
      this.logged = 0;
    }
    if (this.logged < this.options.burst) {
      this.logged++;
      this.log(text);
      return;
    }
    this.skipped++;
    if (key !== undefined) {
      const k = this.byKey.has(key) || this.byKey.size < MAX_KEYS ? key : 'other';
      this.byKey.set(k, (this.byKey.get(k) ?? 0) + 1);
    }
    if (!this.timer) {
      this.timer = setTimeout(() => this.summarize(this.now()), Math.max(0, this.windowStart + this.options.windowMs - now));
      this.timer.unref();
    }
  }

  /** Writes the pending summary now, if any (the proxy closes). */
  close(): void {
    this.summarize(this.now());
  }

  private summarize(now: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.skipped === 0) return;
    const seconds = Math.max(1, Math.ceil((now - this.windowStart) / 1000));
    const keys = this.byKey.size > 0 ? ` (${[...this.byKey].map(([k, n]) => `${k}: ${n}`).join(', ')})` : '';
    const line = `${this.options.summary(this.skipped, seconds)}${keys}`;
    this.skipped = 0;
    this.byKey.clear();
    this.log(line);
  }
}
