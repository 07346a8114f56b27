// "Add exception" on a security event (or a rule group): the change to the zone's
// configuration that lets this host + path through the rule that acted, as an edit of an
// entry point's JSON text (jsonc-parser, so the file's formatting is kept). The command
// pulls the entry point, applies the edit, opens it for review and deploys through the
// usual diff + confirmation. No vscode import: unit-tested.
//
// - Managed rule (source firewallManaged), `skip`: a skip rule at the top of
//   http_request_firewall_custom, `rules: {<ruleset>: [<rule>]}`, for this host and path.
// - Managed rule, `disable`: in http_request_firewall_managed, the execute rule of that
//   ruleset gets a rule override `{id, enabled: false}` (for every request: say so).
// - Custom rule (firewallCustom): a skip rule placed just before it, `ruleset: "current"`
//   (the rest of the entry point's rules for this host and path); a rule of a custom
//   ruleset run by `execute` gets a skip of that ruleset (`rulesets: [<id>]`) at the top.
// - Rate limit (ratelimit): a skip of the http_ratelimit phase at the top.
// - Legacy firewall rules and the previous WAF have no skip rule: an error says what to do.
import { applyEdits, findNodeAtLocation, modify, parseTree, type Node } from 'jsonc-parser';
import type { SecurityEvent } from './queries';

export type ExceptionKind = 'skip' | 'disable';

export interface ExceptionPlan {
  readonly phase: 'http_request_firewall_custom' | 'http_request_firewall_managed';
  /** What the edit does, for the review message. */
  readonly summary: string;
  /** The entry point text with the exception. */
  apply(text: string): string;
}

export class ExceptionError extends Error {}

/** A string literal of the Rules language. */
export function ruleString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function exceptionExpression(e: Pick<SecurityEvent, 'clientRequestHTTPHost' | 'clientRequestPath'>): string {
  return `(http.host eq ${ruleString(e.clientRequestHTTPHost)} and http.request.uri.path eq ${ruleString(e.clientRequestPath)})`;
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

function rulesOf(text: string): { tree: Node | undefined; rules: Node | undefined } {
  const tree = parseTree(text);
  return { tree, rules: tree ? findNodeAtLocation(tree, ['rules']) : undefined };
}

/** `text` with `rule` inserted at `index` of its `rules` (created when absent). */
export function insertRule(text: string, rule: Record<string, unknown>, index: number): string {
  const { tree, rules } = rulesOf(text);
  if (!tree || tree.type !== 'object') throw new ExceptionError('the entry point file is not a JSON object; pull it again');
  if (!rules || rules.type !== 'array') return applyEdits(text, modify(text, ['rules'], [rule], FORMAT));
  return applyEdits(text, modify(text, ['rules', Math.min(index, rules.children?.length ?? 0)], rule, { ...FORMAT, isArrayInsertion: true }));
}

function ruleIds(text: string): (string | undefined)[] {
  const { rules } = rulesOf(text);
  return (rules?.children ?? []).map((r) => {
    const id = r.type === 'object' ? findNodeAtLocation(r, ['id']) : undefined;
    return typeof id?.value === 'string' ? id.value : undefined;
  });
}

function ref(e: SecurityEvent): string {
  return `exception-${(e.ruleId || 'rule').slice(0, 8)}-${e.rayName.slice(0, 8)}`;
}

function label(e: SecurityEvent): string {
  return e.description ? `“${e.description}” (${e.ruleId})` : e.ruleId;
}

export function planException(e: SecurityEvent, kind: ExceptionKind): ExceptionPlan {
  const where = `${e.clientRequestHTTPHost}${e.clientRequestPath}`;
  const skip = (params: Record<string, unknown>, what: string) => ({
    ref: ref(e),
    description: `Exception from security event ${e.rayName}: ${what} for ${where}`,
    expression: exceptionExpression(e),
    action: 'skip',
    action_parameters: params,
    logging: { enabled: true },
    enabled: true,
  });
  switch (e.source) {
    case 'firewallManaged':
      if (kind === 'disable') {
        return {
          phase: 'http_request_firewall_managed',
          summary: `disables managed rule ${label(e)} for every request (an override in the execute rule of ruleset ${e.rulesetId})`,
          apply: (text) => disableOverride(text, e),
        };
      }
      return {
        phase: 'http_request_firewall_custom',
        summary: `skips managed rule ${label(e)} for ${where} (a skip rule at the top of http_request_firewall_custom)`,
        apply: (text) => insertRule(text, skip({ rules: { [e.rulesetId]: [e.ruleId] } }, `skip managed rule ${e.ruleId}`), 0),
      };
    case 'firewallCustom':
      return {
        phase: 'http_request_firewall_custom',
        summary: `skips custom rule ${label(e)} for ${where}`,
        apply: (text) => {
          const at = ruleIds(text).indexOf(e.ruleId);
          if (at >= 0) return insertRule(text, skip({ ruleset: 'current' }, `skip the rules from ${e.ref || e.ruleId} on`), at);
          return insertRule(text, skip({ rulesets: [e.rulesetId] }, `skip custom ruleset ${e.rulesetId}`), 0);
        },
      };
    case 'ratelimit':
      return {
        phase: 'http_request_firewall_custom',
        summary: `skips rate limiting (phase http_ratelimit) for ${where}`,
        apply: (text) => insertRule(text, skip({ phases: ['http_ratelimit'] }, 'skip rate limiting'), 0),
      };
    default:
      throw new ExceptionError(
        e.source === 'firewallRules'
          ? `the event comes from a legacy firewall rule (${e.ruleId}): add the exception to that rule's filter in the Firewall Rules view, or migrate the rules first`
          : `events of source ${e.source} have no exception rule; change the previous WAF's settings instead`,
      );
  }
}

/** The managed entry point with a rule override disabling the event's rule. */
function disableOverride(text: string, e: SecurityEvent): string {
  const { tree, rules } = rulesOf(text);
  if (!tree || tree.type !== 'object') throw new ExceptionError('the entry point file is not a JSON object; pull it again');
  const rulesList = rules?.children ?? [];
  const at = rulesList.findIndex((r) => r.type === 'object' && findNodeAtLocation(r, ['action'])?.value === 'execute' && findNodeAtLocation(r, ['action_parameters', 'id'])?.value === e.rulesetId);
  if (at < 0) throw new ExceptionError(`http_request_firewall_managed has no execute rule of ruleset ${e.rulesetId}: the rule no longer runs on this zone, or runs from an account ruleset`);
  const overrides = findNodeAtLocation(rulesList[at]!, ['action_parameters', 'overrides', 'rules']);
  const existing = (overrides?.children ?? []).findIndex((o) => findNodeAtLocation(o, ['id'])?.value === e.ruleId);
  const path = ['rules', at, 'action_parameters', 'overrides', 'rules'];
  if (existing >= 0) return applyEdits(text, modify(text, [...path, existing, 'enabled'], false, FORMAT));
  if (!overrides) return applyEdits(text, modify(text, path, [{ id: e.ruleId, enabled: false }], FORMAT));
  return applyEdits(text, modify(text, [...path, overrides.children?.length ?? 0], { id: e.ruleId, enabled: false }, { ...FORMAT, isArrayInsertion: true }));
}
