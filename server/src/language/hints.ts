/**
 * What to do about each diagnostic code: a general hint (listed in docs/vscode.md, and the
 * hint of any diagnostic that has none of its own — the engine's wording stays the
 * message, since that is what users search for), and the quick fix the editor offers when
 * there is a likely one, or why there is none. A `Record` over every code, so a new code
 * does not compile until it is described here.
 */
import type { Diagnostic, DiagnosticCode } from './diagnostics';

export interface CodeHelp {
  /** What to do, in general; diagnostics usually say it more precisely. */
  readonly hint: string;
  /** The quick fix offered (lightbulb), when there is a likely one. */
  readonly fix?: string;
  /** Why there is no quick fix, when there is none. */
  readonly noFix?: string;
}

export const CODE_HELP: Readonly<Record<DiagnosticCode, CodeHelp>> = {
  'syntax-error': { hint: 'Add what the message says is expected (a `)`, a `,`, a value) at the underlined place.', noFix: 'what was meant is ambiguous' },
  'expected-comparison-op': { hint: 'A field that is not Bool must be compared: add an operator and a value, e.g. `http.host eq "example.com"`.', noFix: 'the value to compare with is the author’s' },
  'unknown-operator': { hint: 'Use an operator of the Rules language: `eq ne lt le gt ge contains matches wildcard strict wildcard in` (or `== != < <= > >= ~`).', fix: 'change to the operator meant (`equals` → `eq`, `===` → `==`)' },
  'unrecognised-input': { hint: 'The expression is complete before this point: join conditions with `and` / `or`, or remove the extra text.', noFix: 'whether to join or delete is the author’s choice' },
  'tab-character': { hint: 'A tab is not white space in the Rules language: replace it with a space.', fix: 'replace the tabs with spaces' },
  'unterminated-string': { hint: 'Close the string with `"`; inside it write a quote as `\\"` and a backslash as `\\\\`.', fix: 'add the closing quote at the end' },
  'invalid-escape': { hint: 'Only `\\"`, `\\\\`, `\\xHH` and `\\OOO` are escapes: write a backslash as `\\\\`, or use a raw string `r"…"`.', fix: 'escape the backslash (`\\x` → `\\\\x`), or turn the string into a raw string' },
  'invalid-raw-string': { hint: 'A raw string has at most 255 `#`: one more than the longest run of `#` after a `"` inside it is enough.', noFix: 'rare; the count to use depends on the content' },
  'invalid-integer': { hint: 'Integers are decimal (`-12`), hexadecimal with `0x` or octal with a leading `0`, and fit in 64 bits.', noFix: 'the number meant is unknown' },
  'invalid-ip': { hint: 'Write IPv4 as four numbers 0–255 (`192.0.2.1`), IPv6 as `2001:db8::1`, networks as `192.0.2.0/24` (host bits zero), all without quotes.', fix: 'remove the quotes; use the network address (`10.0.0.1/8` → `10.0.0.0/8`)' },
  'invalid-hex-bytes': { hint: 'Hex bytes are pairs of hex digits separated by `:`, `-` or `.` (`41:42`); quote text instead (`"AB"`).', noFix: 'text or bytes: the author’s choice' },
  'invalid-index': { hint: 'Index a map with a double-quoted key (`["content-type"]`), an array with a number (`[0]`), or every element with `[*]`.', fix: 'quote the key (`[x-id]` → `["x-id"]`)' },
  'invalid-list-name': { hint: 'List names are lower case letters, digits and `_` (`$office_ips`).', fix: 'lower-case the name' },
  'incompatible-range-bounds': { hint: 'A range is `A..B` with both ends IPv4 or both IPv6, the lower one first.', noFix: 'the intended bounds are unknown' },
  'cidr-outside-set': { hint: 'A network (CIDR) is only allowed in a set: `ip.src in {10.0.0.0/8}`.', fix: 'change `eq 10.0.0.0/8` to `in {10.0.0.0/8}` (`ne` to `not … in {…}`)' },
  'empty-expression': { hint: 'Write an expression, e.g. `http.host eq "example.com"`.', noFix: 'nothing to fix' },
  'unknown-field': { hint: 'Use a field of the Rules language; names are lower case and dot-separated (`http.request.uri.path`).', fix: 'change to a similar field name' },
  'unknown-function': { hint: 'Use a function of the Rules language (`lower`, `starts_with`, `any`, …).', fix: 'change to a similar function name' },
  'unknown-identifier': { hint: 'The name is not a field or function of the Rules language; names are lower case and dot-separated (`http.request.uri.path`).', fix: 'change to a similar field or function name' },
  'operator-type-mismatch': { hint: 'The operator does not apply to this type: strings take `contains`/`matches`/`wildcard`, numbers and IPs take `eq`/`in`/ordering.', noFix: 'the operator meant depends on intent' },
  'type-mismatch': { hint: 'The value has another type than the place needs: compare a field with a literal of its own type, and wrap element-wise (`[*]`) conditions in `any(…)` / `all(…)`.', fix: 'wrap an element-wise condition in `any(…)` / `all(…)`' },
  'invalid-index-access': { hint: 'Only arrays are indexed by position and maps by key; this value is neither.', noFix: 'the field meant is unknown' },
  'invalid-map-each': { hint: '`[*]` may only appear in the first argument of a function or on the left of a comparison.', noFix: 'the element meant is unknown' },
  'argument-count': { hint: 'Give the function the number of arguments its signature has (see the signature help).', noFix: 'the missing arguments are the author’s' },
  'argument-kind': { hint: 'This argument must be a field or an expression, not a literal value (or the other way round): see the signature.', noFix: 'the field meant is unknown' },
  'argument-type': { hint: 'The argument has another type than the function takes: see the signature (e.g. `lower` takes Bytes, not Ip).', noFix: 'the value meant is unknown' },
  'argument-value': { hint: 'The argument’s value is not one the function accepts: see its documentation.', noFix: 'the value meant is unknown' },
  'dynamic-comparison-disabled': { hint: 'Comparing a field with another field is turned off: enable `rulesmith.dynamicComparisons`, or compare with a literal.', noFix: 'a setting, not the text' },
  'invalid-regex': { hint: 'Cloudflare uses Rust regex syntax (RE2-like): no look-around, no backreferences.', noFix: 'the pattern meant is unknown' },
  'invalid-wildcard': { hint: 'In a wildcard only `*` is special; `\\*` is a literal star and `\\\\` a literal backslash.', noFix: 'the pattern meant is unknown' },
  'expression-too-long': { hint: 'Shorten it: merge comparisons into sets (`in {…}`), or move values into a list (`in $name`).', noFix: 'needs restructuring' },
  'nesting-too-deep': { hint: 'Flatten the expression: remove redundant parentheses and `not`s.', noFix: 'needs restructuring' },
  'too-many-regexes': { hint: 'Combine patterns with `|`, or use `in {…}` / `contains` where a regex is not needed.', noFix: 'needs restructuring' },
  'replace-function-limit': { hint: 'Use `regex_replace` / `wildcard_replace` once per expression: combine the replacements into one call.', noFix: 'needs restructuring' },
  'deprecated-field': { hint: 'Use the replacement field (same value).', fix: 'replace with the new field' },
  'plan-required': { hint: 'The zone’s plan lacks this feature (setting `rulesmith.plan`): the API refuses the rule; use another field or a zone on that plan.', noFix: 'a plan, not the text' },
  'not-in-phase': { hint: 'The field or function is not available in this phase: move the rule to a phase that has it, or use another field.', noFix: 'the phase is the ruleset’s' },
  'ratelimit-restriction': { hint: 'A rate limiting rule cannot read this here (lists with the origin’s answer, or either in an account’s rules): the API refuses the rule.', noFix: 'where the rule lives, not the text' },
  'method-not-uppercase': { hint: 'HTTP methods are upper case: write `"GET"`.', fix: 'upper-case the method' },
  'header-key-not-lowercase': { hint: 'Header names in the header maps are lower case: write `["x-api-key"]`.', fix: 'lower-case the key' },
  'path-without-slash': { hint: 'Paths always start with `/`.', fix: 'add the leading `/`' },
  'never-matches': { hint: 'The literal can never equal the field’s value (its case, its form): write it as the field holds it.', fix: 'change the literal to the form that can match (e.g. `lower(…) eq "Example.COM"` → `"example.com"`)' },
  'ip-ordering': { hint: 'Cloudflare does not order IP addresses: use a range or network in a set, `ip.src in {192.0.2.0..192.0.2.127}`.', noFix: 'the range meant is unknown' },
  'unknown-list': { hint: 'Create the list in the account first, or use one of its lists (`in $name`).', noFix: 'the list meant is unknown' },
  'managed-only': { hint: 'Only managed rulesets may use it; in your own rules use the public fields and functions.', noFix: 'a different rule is needed' },
};

/** The diagnostic, with its code's general hint when it has none of its own. */
export function withHint(d: Diagnostic): Diagnostic {
  return d.hint ? d : { ...d, hint: CODE_HELP[d.code].hint };
}

/** The codes and their hints and quick fixes as a Markdown table (docs/vscode.md holds it; a test compares). */
export function codeHelpMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = Object.entries(CODE_HELP).map(([code, h]) => `| \`${code}\` | ${cell(h.hint)} | ${h.fix ? cell(h.fix) : `— (${cell(h.noFix ?? '')})`} |`);
  return ['| code | hint | quick fix |', '|---|---|---|', ...rows].join('\n');
}
