// A parser for the subset of ModSecurity's configuration language (SecLang) that the OWASP
// Core Rule Set 3.3.4 uses. Build-time only: the CRS converter (scripts/crs/) reads the rule
// files with it; nothing here runs in the extension or the language server.
//
// What it reads, and how (the reading follows ModSecurity 2.x under Apache, which CRS 3.3
// was written and tested against):
//   - Logical lines: a line ending in a backslash continues on the next line; the backslash
//     and the newline are removed, the next line's text (with its indentation) is appended.
//     Continuations are joined before comments are recognised, as Apache does, so a
//     commented-out rule spanning several `#...\` lines stays one comment.
//   - Comments: a logical line whose first non-blank character is `#`. Blank lines.
//   - Directive arguments: bare words or double-quoted strings. Inside double quotes `\"`
//     reads as `"` and `\\` as `\`; every other backslash is kept (Apache's
//     `ap_getword_conf`). Both the raw text and the unescaped value are kept: libmodsecurity 3
//     keeps `\\` as written (ModSecurity issue #2148, CRS issue #2179), which changes 16
//     CRS 3.3.4 regexes (e.g. 930110's `[\\/]`); the converter chooses.
//   - `SecRule VARIABLES OPERATOR [ACTIONS]`, `SecAction ACTIONS`, `SecMarker NAME`,
//     `SecComponentSignature TEXT`; any other `Sec*` directive is kept as `OtherDirective`.
//   - Variables: `A|B:sel|!C:/regex/|&D|XML:/*`; `!` excludes, `&` counts; a selector is a
//     literal name, a `/regex/` (not for XML, whose selector is an XPath) or `'quoted'`.
//   - Operators: optional `!` negation, `@name argument`; without `@` it is `@rx`.
//   - Actions: comma-separated `name` or `name:value`; a value in single quotes may hold
//     commas, `\'` reads as `'` and `\\` as `\` (any other backslash there is an error, as in
//     ModSecurity); an unquoted value runs to the next comma. `t:`, `setvar:`, `ctl:` and
//     `%{…}` macros are further decoded into typed forms.
//   - Chains: a rule with the `chain` action takes the next SecRule as its next link; the
//     whole chain is one logical `Rule`.
// It never throws on bad input: every problem is returned with its file and line, and the
// parser carries on with the next directive.

export interface SourceLocation {
  file: string;
  /** 1-based line of the directive's first physical line. */
  line: number;
  /** 1-based line of its last physical line (after continuations). */
  endLine: number;
}

export interface Problem {
  file: string;
  line: number;
  message: string;
}

/** A string argument of a directive as written and as ModSecurity reads it. */
export interface Arg {
  /** The text between the quotes (or the bare word), escapes untouched. */
  raw: string;
  /** After unescaping (`\"` -> `"`, `\\` -> `\` in double quotes). */
  value: string;
  quoted: boolean;
}

// ---------------------------------------------------------------------------------------
// Macros: `%{tx.critical_anomaly_score}`, `%{MATCHED_VAR}`, `%{TX.0}`

export type MacroPart = { kind: 'text'; value: string } | { kind: 'macro'; raw: string; collection: string; key?: string };

export interface MacroText {
  text: string;
  parts: MacroPart[];
  /** True when at least one `%{…}` occurs. */
  hasMacros: boolean;
}

export function parseMacroText(text: string): MacroText {
  const parts: MacroPart[] = [];
  let buf = '';
  let i = 0;
  let hasMacros = false;
  while (i < text.length) {
    if (text[i] === '%' && text[i + 1] === '{') {
      const end = text.indexOf('}', i + 2);
      if (end > 0) {
        if (buf) parts.push({ kind: 'text', value: buf });
        buf = '';
        const inner = text.slice(i + 2, end);
        const dot = inner.indexOf('.');
        const collection = (dot < 0 ? inner : inner.slice(0, dot)).toUpperCase();
        const part: MacroPart = { kind: 'macro', raw: inner, collection };
        if (dot >= 0) part.key = inner.slice(dot + 1);
        parts.push(part);
        hasMacros = true;
        i = end + 1;
        continue;
      }
    }
    buf += text[i];
    i++;
  }
  if (buf) parts.push({ kind: 'text', value: buf });
  return { text, parts, hasMacros };
}

// ---------------------------------------------------------------------------------------
// Variables

export type Selector =
  | { kind: 'name'; value: string }
  | { kind: 'regex'; pattern: string }
  /** `XML:/*`, `XML://@*`: an XPath expression. */
  | { kind: 'xpath'; value: string };

export interface Variable {
  /** Upper-cased collection or variable name: `ARGS`, `REQUEST_HEADERS`, `TX`. */
  name: string;
  selector?: Selector;
  /** `!VAR:sel`: removes matching members from the target list. */
  exclude: boolean;
  /** `&VAR`: the number of members instead of their values. */
  count: boolean;
  /** The element as written: `!REQUEST_COOKIES:/__utm/`. */
  raw: string;
}

// ---------------------------------------------------------------------------------------
// Operators

export interface Operator {
  /** Without the `@`, as written (`rx`, `pmFromFile`, `detectSQLi`). */
  name: string;
  negated: boolean;
  /** True when written without `@name` (a bare pattern means `@rx`). */
  implicit: boolean;
  /** Everything after the name and the blanks that follow it; '' when none. */
  argument: string;
  /** The argument's macros (`@ge %{tx.inbound_anomaly_score_threshold}`). */
  macros: MacroText;
  raw: string;
}

// ---------------------------------------------------------------------------------------
// Actions

export interface Action {
  /** As written (`t`, `setvar`, `skipAfter`, `multiMatch`). */
  name: string;
  /** Unescaped value; undefined for a bare action (`pass`, `chain`). */
  value?: string;
  /** Whether the value was single-quoted. */
  quoted: boolean;
}

export type SetVarOp = 'set' | 'add' | 'subtract' | 'delete';

export interface SetVar {
  /** Lower-cased collection: `tx`, `ip`, `session`. */
  collection: string;
  /** Variable name inside the collection as written (may hold macros). */
  key: string;
  keyMacros: MacroText;
  /** `=` set, `=+` add, `=-` subtract, `!name` delete; `setvar:tx.x` (no `=`) sets 1. */
  op: SetVarOp;
  value: MacroText;
  raw: string;
}

export interface Ctl {
  /** `ruleRemoveTargetById`, `auditLogParts`, `ruleEngine`, `requestBodyProcessor`, … */
  option: string;
  value: string;
  raw: string;
}

export const DISRUPTIVE_ACTIONS = ['pass', 'block', 'deny', 'drop', 'allow', 'redirect', 'proxy', 'pause'] as const;
export type Disruptive = (typeof DISRUPTIVE_ACTIONS)[number];

// ---------------------------------------------------------------------------------------
// Directives

/** One SecRule or SecAction; a chained rule is a list of links. */
export interface RuleLink {
  directive: 'SecRule' | 'SecAction';
  loc: SourceLocation;
  /** Empty for SecAction. */
  variables: Variable[];
  /** null for SecAction (it always matches). */
  operator: Operator | null;
  actions: Action[];
  /** `t:` names in order, as written (including `none`). */
  transformationsWritten: string[];
  /** The transformations in effect: those after the last `t:none`. */
  transformations: string[];
  /** Whether this link resets the inherited transformations with `t:none`. */
  resetsTransformations: boolean;
  setvars: SetVar[];
  ctls: Ctl[];
  args: { variables?: Arg; operator?: Arg; actions?: Arg };
}

export type Severity = 'EMERGENCY' | 'ALERT' | 'CRITICAL' | 'ERROR' | 'WARNING' | 'NOTICE' | 'INFO' | 'DEBUG';
const SEVERITY_BY_NUMBER: Severity[] = ['EMERGENCY', 'ALERT', 'CRITICAL', 'ERROR', 'WARNING', 'NOTICE', 'INFO', 'DEBUG'];

/** A logical rule: a SecRule/SecAction and the links it chains. */
export interface Rule {
  type: 'rule';
  loc: SourceLocation;
  /** Metadata comes from the first link, as in ModSecurity. */
  id?: number;
  phase?: number;
  disruptive?: Disruptive;
  severity?: Severity;
  msg?: string;
  logdata?: string;
  tags: string[];
  ver?: string;
  skipAfter?: string;
  skip?: number;
  links: RuleLink[];
  /** True when the last link still asks for a `chain` (a broken chain at end of file). */
  danglingChain: boolean;
}

export interface Marker {
  type: 'marker';
  loc: SourceLocation;
  name: string;
}

export interface ComponentSignature {
  type: 'componentSignature';
  loc: SourceLocation;
  value: string;
}

export interface OtherDirective {
  type: 'other';
  loc: SourceLocation;
  name: string;
  args: Arg[];
}

export type Directive = Rule | Marker | ComponentSignature | OtherDirective;

export interface ParsedFile {
  file: string;
  directives: Directive[];
  problems: Problem[];
  /** Physical SecRule/SecAction directives read (chain links counted one by one). */
  counts: { secRule: number; secAction: number; secMarker: number; other: number; comments: number };
}

// ---------------------------------------------------------------------------------------
// Logical lines

export interface LogicalLine {
  text: string;
  line: number;
  endLine: number;
}

export function logicalLines(text: string): LogicalLine[] {
  const physical = text.split(/\r?\n/);
  const out: LogicalLine[] = [];
  let i = 0;
  while (i < physical.length) {
    const start = i;
    let acc = physical[i];
    while (acc.endsWith('\\') && i + 1 < physical.length) {
      acc = acc.slice(0, -1) + physical[i + 1];
      i++;
    }
    if (acc.endsWith('\\')) acc = acc.slice(0, -1);
    out.push({ text: acc, line: start + 1, endLine: i + 1 });
    i++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Directive argument tokenizer

function tokenizeArgs(s: string, onError: (msg: string) => void): Arg[] {
  const args: Arg[] = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    while (i < n && /\s/.test(s[i])) i++;
    if (i >= n) break;
    const q = s[i];
    if (q === '"' || q === "'") {
      i++;
      let raw = '';
      let value = '';
      let closed = false;
      while (i < n) {
        const c = s[i];
        if (c === '\\' && i + 1 < n && (s[i + 1] === q || s[i + 1] === '\\')) {
          raw += c + s[i + 1];
          value += s[i + 1];
          i += 2;
          continue;
        }
        if (c === q) {
          closed = true;
          i++;
          break;
        }
        raw += c;
        value += c;
        i++;
      }
      if (!closed) onError(`unterminated ${q === '"' ? 'double' : 'single'}-quoted argument`);
      if (i < n && !/\s/.test(s[i])) onError(`text right after a closing quote: ${JSON.stringify(s.slice(i, i + 20))}`);
      args.push({ raw, value, quoted: true });
    } else {
      let raw = '';
      while (i < n && !/\s/.test(s[i])) raw += s[i++];
      // Apache unescapes `\\` in bare words too; CRS has none, keep it as written.
      args.push({ raw, value: raw, quoted: false });
    }
  }
  return args;
}

// ---------------------------------------------------------------------------------------
// Variables

export function parseVariables(s: string, onError: (msg: string) => void): Variable[] {
  const out: Variable[] = [];
  const n = s.length;
  let i = 0;
  while (i < n) {
    const start = i;
    let exclude = false;
    let count = false;
    if (s[i] === '!') {
      exclude = true;
      i++;
    }
    if (s[i] === '&') {
      count = true;
      i++;
    }
    let name = '';
    while (i < n && s[i] !== ':' && s[i] !== '|') name += s[i++];
    let selector: Selector | undefined;
    if (s[i] === ':') {
      i++;
      const upper = name.toUpperCase();
      if (upper === 'XML') {
        let v = '';
        while (i < n && s[i] !== '|') v += s[i++];
        selector = { kind: 'xpath', value: v };
      } else if (s[i] === '/') {
        i++;
        let pat = '';
        let closed = false;
        while (i < n) {
          if (s[i] === '\\' && i + 1 < n) {
            pat += s[i] + s[i + 1];
            i += 2;
            continue;
          }
          if (s[i] === '/') {
            closed = true;
            i++;
            break;
          }
          pat += s[i++];
        }
        if (!closed) onError(`unterminated regex selector in variable ${JSON.stringify(s.slice(start))}`);
        selector = { kind: 'regex', pattern: pat };
      } else if (s[i] === "'") {
        i++;
        let v = '';
        while (i < n && s[i] !== "'") v += s[i++];
        if (s[i] === "'") i++;
        else onError(`unterminated quoted selector in variable ${JSON.stringify(s.slice(start))}`);
        selector = { kind: 'name', value: v };
      } else {
        let v = '';
        while (i < n && s[i] !== '|') v += s[i++];
        if (v === '') onError(`empty selector after ':' in ${JSON.stringify(s.slice(start, i))}`);
        selector = { kind: 'name', value: v };
      }
    }
    if (i < n && s[i] !== '|') {
      onError(`unexpected ${JSON.stringify(s[i])} in variable ${JSON.stringify(s.slice(start))}`);
      while (i < n && s[i] !== '|') i++;
    }
    const raw = s.slice(start, i);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) onError(`bad variable name ${JSON.stringify(name)} in ${JSON.stringify(raw)}`);
    else {
      const v: Variable = { name: name.toUpperCase(), exclude, count, raw };
      if (selector) v.selector = selector;
      out.push(v);
    }
    if (s[i] === '|') {
      i++;
      if (i >= n) onError(`trailing '|' in variables ${JSON.stringify(s)}`);
    }
  }
  if (out.length === 0) onError('no variables');
  return out;
}

// ---------------------------------------------------------------------------------------
// Operators

export function parseOperator(s: string, onError: (msg: string) => void): Operator {
  let i = 0;
  let negated = false;
  while (s[i] === ' ' || s[i] === '\t') i++;
  if (s[i] === '!') {
    negated = true;
    i++;
  }
  if (s[i] === '@') {
    let name = '';
    i++;
    while (i < s.length && !/\s/.test(s[i])) name += s[i++];
    while (i < s.length && /\s/.test(s[i])) i++;
    const argument = s.slice(i);
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) onError(`bad operator name ${JSON.stringify('@' + name)}`);
    return { name, negated, implicit: false, argument, macros: parseMacroText(argument), raw: s };
  }
  const argument = s.slice(i);
  return { name: 'rx', negated, implicit: true, argument, macros: parseMacroText(argument), raw: s };
}

// ---------------------------------------------------------------------------------------
// Actions

export function parseActions(s: string, onError: (msg: string) => void): Action[] {
  const out: Action[] = [];
  const n = s.length;
  let i = 0;
  const skipWs = () => {
    while (i < n && /\s/.test(s[i])) i++;
  };
  while (true) {
    skipWs();
    if (i >= n) break;
    let name = '';
    while (i < n && s[i] !== ':' && s[i] !== ',' && !/\s/.test(s[i])) name += s[i++];
    skipWs();
    if (name === '') {
      onError(`empty action at ${JSON.stringify(s.slice(i, i + 30))}`);
      // skip to the next comma
      while (i < n && s[i] !== ',') i++;
      i++;
      continue;
    }
    if (s[i] === ':') {
      i++;
      skipWs();
      if (s[i] === "'") {
        i++;
        let value = '';
        let closed = false;
        while (i < n) {
          const c = s[i];
          if (c === '\\') {
            const d = s[i + 1];
            if (d === "'" || d === '\\') {
              value += d;
              i += 2;
              continue;
            }
            onError(`invalid escape ${JSON.stringify('\\' + (d ?? ''))} in quoted value of action ${name}`);
            value += c;
            i++;
            continue;
          }
          if (c === "'") {
            closed = true;
            i++;
            break;
          }
          value += c;
          i++;
        }
        if (!closed) onError(`missing closing quote in action ${name}`);
        out.push({ name, value, quoted: true });
        skipWs();
      } else {
        let value = '';
        while (i < n && s[i] !== ',') value += s[i++];
        out.push({ name, value: value.trimEnd(), quoted: false });
      }
    } else {
      out.push({ name, quoted: false });
    }
    skipWs();
    if (i >= n) break;
    if (s[i] === ',') {
      i++;
      skipWs();
      if (i >= n) onError('trailing comma in actions');
      continue;
    }
    onError(`expected ',' after action ${name}, found ${JSON.stringify(s.slice(i, i + 20))}`);
    while (i < n && s[i] !== ',') i++;
    i++;
  }
  return out;
}

export function parseSetVar(raw: string, onError: (msg: string) => void): SetVar | undefined {
  let s = raw.trim();
  let op: SetVarOp = 'set';
  if (s.startsWith('!')) {
    op = 'delete';
    s = s.slice(1);
  }
  const eq = s.indexOf('=');
  let target = eq < 0 ? s : s.slice(0, eq);
  let value = eq < 0 ? (op === 'delete' ? '' : '1') : s.slice(eq + 1);
  if (eq >= 0 && op !== 'delete') {
    if (value.startsWith('+')) {
      op = 'add';
      value = value.slice(1);
    } else if (value.startsWith('-')) {
      op = 'subtract';
      value = value.slice(1);
    }
  } else if (eq >= 0) onError(`setvar ${JSON.stringify(raw)}: a deletion takes no value`);
  target = target.trim();
  const dot = target.indexOf('.');
  if (dot <= 0 || dot === target.length - 1) {
    onError(`setvar ${JSON.stringify(raw)}: expected collection.name`);
    return undefined;
  }
  const key = target.slice(dot + 1);
  return { collection: target.slice(0, dot).toLowerCase(), key, keyMacros: parseMacroText(key), op, value: parseMacroText(value), raw };
}

export function parseCtl(raw: string, onError: (msg: string) => void): Ctl | undefined {
  const eq = raw.indexOf('=');
  if (eq <= 0) {
    onError(`ctl ${JSON.stringify(raw)}: expected option=value`);
    return undefined;
  }
  return { option: raw.slice(0, eq).trim(), value: raw.slice(eq + 1).trim(), raw };
}

function severityOf(v: string): Severity | undefined {
  const u = v.trim().toUpperCase();
  if (/^[0-7]$/.test(u)) return SEVERITY_BY_NUMBER[Number(u)];
  return (SEVERITY_BY_NUMBER as string[]).includes(u) ? (u as Severity) : undefined;
}

// Actions allowed only on the first link of a chain (ModSecurity's "metadata" and
// disruptive actions). Found on a later link they are reported.
const FIRST_LINK_ONLY = new Set(['id', 'phase', 'msg', 'severity', 'tag', 'ver', 'rev', 'maturity', 'accuracy', 'skipAfter', 'skip', 'logdata' /* allowed but unusual */]);
const KNOWN_ACTIONS = new Set([
  'id', 'phase', 'msg', 'logdata', 'severity', 'tag', 'ver', 'rev', 'maturity', 'accuracy',
  'pass', 'block', 'deny', 'drop', 'allow', 'redirect', 'proxy', 'pause', 'status',
  't', 'setvar', 'setenv', 'setuid', 'setsid', 'initcol', 'expirevar', 'deprecatevar',
  'chain', 'skip', 'skipAfter', 'ctl', 'capture', 'multiMatch', 'log', 'nolog', 'auditlog', 'noauditlog',
  'sanitiseArg', 'sanitiseMatched', 'sanitiseMatchedBytes', 'sanitiseRequestHeader', 'sanitiseResponseHeader',
  'exec', 'append', 'prepend', 'xmlns',
]);

function buildLink(
  directive: 'SecRule' | 'SecAction',
  loc: SourceLocation,
  variables: Variable[],
  operator: Operator | null,
  actions: Action[],
  args: RuleLink['args'],
  onError: (msg: string) => void,
): RuleLink {
  const written: string[] = [];
  let effective: string[] = [];
  let resets = false;
  const setvars: SetVar[] = [];
  const ctls: Ctl[] = [];
  for (const a of actions) {
    if (!KNOWN_ACTIONS.has(a.name)) onError(`unknown action ${JSON.stringify(a.name)}`);
    if (a.name === 't') {
      const t = a.value ?? '';
      if (!t) onError('t: without a transformation');
      written.push(t);
      if (t.toLowerCase() === 'none') {
        effective = [];
        resets = true;
      } else effective.push(t);
    } else if (a.name === 'setvar') {
      const sv = parseSetVar(a.value ?? '', onError);
      if (sv) setvars.push(sv);
    } else if (a.name === 'ctl') {
      const c = parseCtl(a.value ?? '', onError);
      if (c) ctls.push(c);
    }
  }
  return { directive, loc, variables, operator, actions, transformationsWritten: written, transformations: effective, resetsTransformations: resets, setvars, ctls, args };
}

function newRule(first: RuleLink, onError: (msg: string) => void): Rule {
  const rule: Rule = { type: 'rule', loc: { ...first.loc }, tags: [], links: [first], danglingChain: false };
  for (const a of first.actions) {
    const v = a.value ?? '';
    switch (a.name) {
      case 'id':
        if (!/^\d+$/.test(v.trim())) onError(`bad id ${JSON.stringify(v)}`);
        else if (rule.id !== undefined) onError(`second id ${v}`);
        else rule.id = Number(v.trim());
        break;
      case 'phase': {
        const p = v.trim().toLowerCase();
        const num = p === 'request' ? 2 : p === 'response' ? 4 : p === 'logging' ? 5 : Number(p);
        if (!Number.isInteger(num) || num < 1 || num > 5) onError(`bad phase ${JSON.stringify(v)}`);
        else rule.phase = num;
        break;
      }
      case 'severity': {
        const s = severityOf(v);
        if (!s) onError(`bad severity ${JSON.stringify(v)}`);
        else rule.severity = s;
        break;
      }
      case 'msg':
        rule.msg = v;
        break;
      case 'logdata':
        rule.logdata = v;
        break;
      case 'tag':
        rule.tags.push(v);
        break;
      case 'ver':
        rule.ver = v;
        break;
      case 'skipAfter':
        rule.skipAfter = v;
        break;
      case 'skip':
        if (!/^\d+$/.test(v.trim())) onError(`bad skip ${JSON.stringify(v)}`);
        else rule.skip = Number(v);
        break;
      default:
        if ((DISRUPTIVE_ACTIONS as readonly string[]).includes(a.name)) {
          if (rule.disruptive && rule.disruptive !== a.name) onError(`two disruptive actions: ${rule.disruptive} and ${a.name}`);
          rule.disruptive = a.name as Disruptive;
        }
    }
  }
  return rule;
}

export function hasAction(link: RuleLink, name: string): boolean {
  return link.actions.some((a) => a.name === name);
}

// ---------------------------------------------------------------------------------------
// Files

export function parseSecLang(text: string, file = '<input>'): ParsedFile {
  const problems: Problem[] = [];
  const directives: Directive[] = [];
  const counts = { secRule: 0, secAction: 0, secMarker: 0, other: 0, comments: 0 };
  /** The rule whose last link asked for `chain`. */
  let open: Rule | undefined;

  const closeOpen = (line: number, why: string) => {
    if (open) {
      problems.push({ file, line, message: `rule ${open.id ?? '(no id)'} at line ${open.loc.line} ends with 'chain' but ${why}` });
      open.danglingChain = true;
      open = undefined;
    }
  };

  for (const ll of logicalLines(text)) {
    const trimmed = ll.text.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      counts.comments++;
      continue;
    }
    const loc: SourceLocation = { file, line: ll.line, endLine: ll.endLine };
    const err = (message: string) => problems.push({ file, line: ll.line, message });
    const m = /^(\S+)\s*(.*)$/s.exec(trimmed)!;
    const name = m[1];
    const args = tokenizeArgs(m[2], err);
    const lname = name.toLowerCase();

    if (lname === 'secrule' || lname === 'secaction') {
      let link: RuleLink;
      if (lname === 'secrule') {
        counts.secRule++;
        if (args.length < 2 || args.length > 3) {
          err(`SecRule takes 2 or 3 arguments, found ${args.length}`);
          if (args.length < 2) {
            closeOpen(ll.line, 'the next SecRule is malformed');
            continue;
          }
        }
        const variables = parseVariables(args[0].value, err);
        const operator = parseOperator(args[1].value, err);
        const actions = args[2] ? parseActions(args[2].value, err) : [];
        link = buildLink('SecRule', loc, variables, operator, actions, { variables: args[0], operator: args[1], actions: args[2] }, err);
      } else {
        counts.secAction++;
        if (args.length !== 1) err(`SecAction takes 1 argument, found ${args.length}`);
        const actions = args[0] ? parseActions(args[0].value, err) : [];
        link = buildLink('SecAction', loc, [], null, actions, { actions: args[0] }, err);
      }
      if (open) {
        if (link.directive === 'SecAction') err('SecAction cannot be a chained link');
        for (const a of link.actions) if (FIRST_LINK_ONLY.has(a.name) && a.name !== 'logdata') err(`action ${a.name} is only allowed in the first rule of a chain`);
        for (const a of link.actions) if ((DISRUPTIVE_ACTIONS as readonly string[]).includes(a.name)) err(`disruptive action ${a.name} in a chained link`);
        open.links.push(link);
        open.loc.endLine = link.loc.endLine;
        if (!hasAction(link, 'chain')) open = undefined;
      } else {
        const rule = newRule(link, err);
        if (rule.id === undefined) err(`${name} without an id`);
        if (rule.phase === undefined) err(`rule ${rule.id ?? ''} without a phase`.replace('  ', ' '));
        directives.push(rule);
        if (hasAction(link, 'chain')) open = rule;
      }
      continue;
    }

    closeOpen(ll.line, `${name} follows it`);
    if (lname === 'secmarker') {
      counts.secMarker++;
      if (args.length !== 1) err(`SecMarker takes 1 argument, found ${args.length}`);
      directives.push({ type: 'marker', loc, name: args[0]?.value ?? '' });
    } else if (lname === 'seccomponentsignature') {
      counts.other++;
      if (args.length !== 1) err(`SecComponentSignature takes 1 argument, found ${args.length}`);
      directives.push({ type: 'componentSignature', loc, value: args[0]?.value ?? '' });
    } else {
      counts.other++;
      if (!/^Sec[A-Za-z]+$/i.test(name)) err(`not a directive: ${JSON.stringify(trimmed.slice(0, 40))}`);
      directives.push({ type: 'other', loc, name, args });
    }
  }
  closeOpen(text.split(/\r?\n/).length, 'the file ends');
  return { file, directives, problems, counts };
}

/** All rules of a parsed file (chains are one rule each). */
export function rulesOf(parsed: ParsedFile): Rule[] {
  return parsed.directives.filter((d): d is Rule => d.type === 'rule');
}
