/**
 * Passing a challenge locally: the interstitial's button posts to CHALLENGE_PATH, which
 * answers with a clearance cookie for the zone and the visitor (HMAC of zone, visitor and
 * expiry under a key that lives as long as the proxy) and sends the browser back. The
 * visitor is the client's address and User-Agent, as the hosted cf_clearance is bound to
 * the visitor: a cookie copied to another client (a bot farm sharing one solve) is no
 * clearance there. A request with a valid cookie
 * passes the zone's challenge rules (rulesets/engine.ts RequestHooks.challengePassed): the
 * rule is logged and evaluation goes on, so a block rule after it still blocks.
 *
 * The interstitial's form also posts back the challenged request's ray id, with a pass signed
 * for that ray id, zone and visitor (`passToken`): only a press that carries one gets the
 * cookie (proxy.ts `passChallenge`), so another site's form cannot pass a challenge for the
 * browser that submits it. For the solve's event the proxy keeps what it needs
 * (PendingChallenges) and records the solve when the same visitor presses the button.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SizedLru } from '../language/sizedLru';

export const CLEARANCE_COOKIE = 'rulesmith_clearance';
/** The proxy's own path on every zone host (never forwarded). */
export const CHALLENGE_PATH = '/.rulesmith/challenge';
export const CLEARANCE_SECONDS = 30 * 60;

/** Who a clearance is for: the client's address (as the rules see ip.src) and its User-Agent. */
export interface Visitor {
  readonly ip: string;
  readonly userAgent: string;
}

export class Clearance {
  private readonly key = randomBytes(32);

  constructor(private readonly now: () => number = Date.now) {}

  /** `ray`: a challenge's pass (its ray id), or '' for the clearance cookie, so that neither stands for the other. */
  private mac(zoneId: string, visitor: Visitor, expires: number, ray = ''): string {
    return createHmac('sha256', this.key).update(`${zoneId}\u0000${visitor.ip}\u0000${visitor.userAgent}\u0000${expires}\u0000${ray}`).digest('base64url');
  }

  /**
   * What the interstitial's form carries beside the ray id (`pass`): proof that the proxy
   * served this challenge to this visitor for this zone, for CLEARANCE_SECONDS. Nothing is
   * kept for it, so no flood of challenged requests can crowd out a visitor's press; another
   * site cannot make one for a browser it sends a form from.
   */
  passToken(zoneId: string, visitor: Visitor, ray: string): string {
    return this.sign(zoneId, visitor, ray);
  }

  /** Whether `token` is a pass the proxy made for this zone, visitor and ray id that has not expired. */
  passValid(zoneId: string, visitor: Visitor, ray: string, token: string | null): boolean {
    return !!ray && this.signed(zoneId, visitor, token ?? '', ray);
  }

  /** `expires.mac` for CLEARANCE_SECONDS from now: a cookie's value, or with `ray` a pass. */
  private sign(zoneId: string, visitor: Visitor, ray = ''): string {
    const expires = Math.floor(this.now() / 1000) + CLEARANCE_SECONDS;
    return `${expires}.${this.mac(zoneId, visitor, expires, ray)}`;
  }

  /** Whether `value` (`expires.mac`, a cookie's or a pass's) was signed here for these and has not expired. */
  private signed(zoneId: string, visitor: Visitor, value: string, ray = ''): boolean {
    const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!m) return false;
    const expires = Number(m[1]);
    if (expires * 1000 <= this.now()) return false;
    const want = Buffer.from(this.mac(zoneId, visitor, expires, ray));
    const got = Buffer.from(m[2]!);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  /** The Set-Cookie header value that clears `zoneId` for `visitor` for CLEARANCE_SECONDS; `Secure` when the browser came over https (a trusted edge in front said so). */
  cookie(zoneId: string, visitor: Visitor, secure = false): string {
    return `${CLEARANCE_COOKIE}=${this.sign(zoneId, visitor)}; Path=/; Max-Age=${CLEARANCE_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  }

  /** Whether the request's Cookie header holds a clearance for `zoneId` and this `visitor` that has not expired. */
  valid(zoneId: string, visitor: Visitor, cookieHeader: string | undefined): boolean {
    if (!cookieHeader || !cookieHeader.includes(CLEARANCE_COOKIE)) return false;
    for (const piece of cookieHeader.split(';')) {
      const [name, value] = piece.trim().split('=', 2);
      if (name !== CLEARANCE_COOKIE || !value) continue;
      if (this.signed(zoneId, visitor, value)) return true;
    }
    return false;
  }
}

/**
 * Where the browser goes after passing: a path on the same host (anything else goes to
 * `/`). Browsers drop tabs and newlines from a URL and read `\` as `/` in its path, so
 * `/<tab>/evil` or `/\evil` would leave the host: a value with control characters or
 * spaces, or a backslash before its query, is refused, and so is one that a URL parser
 * resolves to another origin. (A query may hold a backslash: `?q=C:\temp`.)
 */
export function safeReturn(value: string | null | undefined): string {
  if (!value || !value.startsWith('/') || /[\u0000-\u0020\u007f]/.test(value) || /^[^?#]*\\/.test(value)) return '/';
  const base = 'http://return.invalid';
  const url = new URL(value, base);
  // As the URL serializes it: percent-encoded, so a character no header may hold (`/%E3%80%80`) cannot fail the Location header.
  return url.origin === base ? `${url.pathname}${url.search}${url.hash}` : '/';
}

/** At most this many challenges served are kept for their solve (PendingChallenges), the oldest dropped first. */
export const MAX_PENDING_CHALLENGES = 10_000;
/** And at most this many estimated bytes (a request's path, query and User-Agent may be 16 KB). */
export const MAX_PENDING_CHALLENGE_BYTES = 16 * 1024 * 1024;

/**
 * The challenges served with the interstitial whose button may still be pressed: a value per
 * challenged request's ray id (the form posts it back), for the solve's security event.
 * Bounded as a SizedLru (at most `maxEntries` entries and `maxBytes` estimated bytes, the
 * oldest dropped first); an entry expires `ttlMs` after it was kept (the clearance's
 * lifetime, by default). A solve is taken once.
 */
export class PendingChallenges<V> {
  private readonly kept: SizedLru<{ readonly value: V; readonly expires: number }>;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly limits: { readonly maxEntries: number; readonly maxBytes: number; readonly ttlMs: number } = { maxEntries: MAX_PENDING_CHALLENGES, maxBytes: MAX_PENDING_CHALLENGE_BYTES, ttlMs: CLEARANCE_SECONDS * 1000 },
  ) {
    this.kept = new SizedLru(limits.maxBytes, undefined, limits.maxEntries);
  }

  get size(): number {
    return this.kept.size;
  }

  /** The estimated bytes held now. */
  get bytes(): number {
    return this.kept.bytes;
  }

  /** Keeps `value` for `key` (its estimated size `bytes`), the expired entries dropped first; one larger than the whole budget is not kept. */
  remember(key: string, value: V, bytes: number): void {
    const t = this.now();
    // Kept in order, so the expired ones lead.
    for (const [k, e] of this.kept.oldest()) {
      if (e.expires > t) break;
      this.kept.delete(k);
    }
    this.kept.set(key, { value, expires: t + this.limits.ttlMs }, bytes);
  }

  /**
   * The value kept for `key` when it has not expired and `accept` takes it; it is forgotten
   * then (a challenge is solved once). One `accept` refuses (another visitor) is kept for its own.
   */
  take(key: string, accept: (value: V) => boolean): V | undefined {
    const e = this.kept.peek(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.kept.delete(key);
      return undefined;
    }
    if (!accept(e.value)) return undefined;
    this.kept.delete(key);
    return e.value;
  }
}
