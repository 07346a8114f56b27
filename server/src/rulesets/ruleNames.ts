/**
 * How a rule is named for people, in one place: the CLI's lines, the editor's CodeLens and
 * trace, the rules service's trace steps and the extension's trees all name rules here.
 */
import { OWASP_RULESET_ID, VENDOR_RULESET_ID } from './managedIds';

/** What a rule can be named by. An engine `RuleRef` or `Decision` has this shape. */
export interface RuleNaming {
  readonly rulesetId?: string;
  readonly ruleId?: string;
  readonly ref?: string;
  readonly description?: string;
  /** For `title`: the rule's expression. */
  readonly expression?: string;
  /** For `title`: the rule's position in its ruleset, from 0. */
  readonly index?: number;
  /** For `title` of an `execute` rule: the name (or id) of the ruleset it runs. */
  readonly executes?: string;
}

/**
 * - `short`: a few characters for a CodeLens or a note — the ref (`log4shell-uri`), or the
 *   CRS number that starts the description (`949110`), or the description quoted and
 *   clipped, or the id shortened; prefixed `vendor:` / `owasp:` inside the built-in
 *   managed rulesets.
 * - `full`: every handle, for a line a person may search with — `block-admin id 0123… "Block admin"`.
 * - `handle`: the one value a program looks the rule up by — id, else ref, else description.
 * - `title`: a tree label — the description, else what the rule runs or matches, else its ref,
 *   else its position (`Rule 3`).
 */
export type RuleNameForm = 'short' | 'full' | 'handle' | 'title';

/** Short names of the built-in managed rulesets, as prefixes of their rules' names. */
const SHORT_RULESET: Readonly<Record<string, string>> = { [VENDOR_RULESET_ID]: 'vendor', [OWASP_RULESET_ID]: 'owasp' };

const HEX_ID = /^[0-9a-f]{32}$/i;

const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A 32-hex-digit id cut to its first 8 digits (`ab12cd34…`); any other text unchanged. */
export function shortId(id: string): string {
  return HEX_ID.test(id) ? `${id.slice(0, 8)}…` : id;
}

/** The rule's name in `form`, or undefined when there is nothing to name it by. */
export function describeRule(r: RuleNaming, form: RuleNameForm): string | undefined {
  switch (form) {
    case 'handle':
      return r.ruleId ?? r.ref ?? r.description;
    case 'full': {
      const parts: string[] = [];
      if (r.ref && r.ref !== r.ruleId) parts.push(r.ref);
      if (r.ruleId) parts.push(`id ${r.ruleId}`);
      if (r.description) parts.push(`"${r.description}"`);
      return parts.length > 0 ? parts.join(' ') : undefined;
    }
    case 'short': {
      let name: string | undefined;
      if (r.ref && !HEX_ID.test(r.ref)) name = r.ref;
      else if (r.description && /^\d{3,}\b/.test(r.description)) name = /^\d+/.exec(r.description)![0];
      else if (r.description) name = `"${clip(r.description, 48)}"`;
      else {
        const id = r.ref ?? r.ruleId;
        if (id) name = shortId(id);
      }
      if (name === undefined) return undefined;
      const prefix = r.rulesetId ? SHORT_RULESET[r.rulesetId] : undefined;
      return prefix ? `${prefix}:${name}` : name;
    }
    case 'title': {
      if (r.description?.trim()) return r.description.trim();
      if (r.executes !== undefined) return `Execute ${r.executes}`;
      if (r.expression) return clip(r.expression, 60);
      if (r.ref) return r.ref;
      return r.index !== undefined ? `Rule ${r.index + 1}` : undefined;
    }
  }
}
