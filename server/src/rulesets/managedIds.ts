/**
 * Stable ids of the managed rulesets and their rules.
 *
 * The three ruleset ids are the hosted service's own (reference crs-and-managed-rules §4.1),
 * so an `execute` rule written for it (`"id": "efb7b8c9…"`) deploys the same ruleset here.
 * The anomaly-score rule of the OWASP-based ruleset keeps its documented id and ref. Every
 * other rule id is ours: minted from a name with `mintId` (a 128-bit FNV-1a hash, then a
 * bijective mixing step so that similar names do not give similar-looking ids), so it never
 * changes as long as the name (`vendor:<ref>`, `owasp:<crs id>`) does not.
 */

/** Cloudflare Managed Ruleset. */
export const VENDOR_RULESET_ID = 'efb7b8c949ac4650a09736fc376e9aee';
/** Cloudflare OWASP Core Ruleset. */
export const OWASP_RULESET_ID = '4814384a9e5d4991b9815dcfc25d2f1f';
/** Cloudflare Free Managed Ruleset. */
export const FREE_RULESET_ID = '77454fe2d30c4220b5701f6fdfb893ba';
/** `949110: Inbound Anomaly Score Exceeded`, the last rule of the OWASP-based ruleset. */
export const OWASP_ANOMALY_RULE_ID = '6179ae15870a4bb7b2d480d4843b323c';
export const OWASP_ANOMALY_RULE_REF = 'ad0beb2fce9f149e565ee78d6e659d47';

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x0000000001000000000000000000013bn;
const MASK128 = (1n << 128n) - 1n;

/** FNV-1a, 128 bits, over the UTF-8 bytes of `text`; 32 lower-case hex digits. */
export function fnv1a128(text: string): string {
  let h = FNV128_OFFSET;
  for (const byte of utf8Bytes(text)) {
    h ^= BigInt(byte);
    h = (h * FNV128_PRIME) & MASK128;
  }
  return h.toString(16).padStart(32, '0');
}

/**
 * A stable 32-hex rule id for `name`, e.g. `mintId('vendor:log4shell-uri')`. Namespaced
 * names keep the vendor and OWASP rules apart; the same name always gives the same id.
 */
export function mintId(name: string): string {
  const h = BigInt(`0x${fnv1a128(name)}`);
  // FNV-1a avalanches poorly on short inputs; three Feistel-style rounds of the MurmurHash3
  // finalizer (a bijection on 64 bits) spread every input bit over the id without adding
  // collisions.
  let hi = h >> 64n;
  let lo = h & MASK64;
  hi = fmix64(hi ^ lo);
  lo = fmix64(lo ^ hi);
  hi = fmix64(hi ^ lo);
  return ((hi << 64n) | lo).toString(16).padStart(32, '0');
}

const MASK64 = (1n << 64n) - 1n;

function fmix64(k: bigint): bigint {
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK64;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK64;
  k ^= k >> 33n;
  return k;
}

/** Whether `id` has the shape of a ruleset or rule id: 32 lower-case hex digits. */
export function isRuleId(id: string): boolean {
  return /^[0-9a-f]{32}$/.test(id);
}

function* utf8Bytes(text: string): Generator<number> {
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x80) yield cp;
    else if (cp < 0x800) {
      yield 0xc0 | (cp >> 6);
      yield 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      yield 0xe0 | (cp >> 12);
      yield 0x80 | ((cp >> 6) & 0x3f);
      yield 0x80 | (cp & 0x3f);
    } else {
      yield 0xf0 | (cp >> 18);
      yield 0x80 | ((cp >> 12) & 0x3f);
      yield 0x80 | ((cp >> 6) & 0x3f);
      yield 0x80 | (cp & 0x3f);
    }
  }
}
