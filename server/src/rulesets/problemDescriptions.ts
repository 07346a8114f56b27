/**
 * What each code of a ruleset's own problems means in general: why the hosted service cares
 * and how to fix it, never one case's specifics (those are the problem's message and hint),
 * and where the Cloudflare documentation covers it. One table for every code the ruleset
 * validator reports (`RULESET_PROBLEM_CODES`), the Terraform checks add
 * (`TERRAFORM_PROBLEM_CODES`, server/src/terraform/check.ts) and `rulesmith check` reports
 * on a JSON file with no rules (`NO_EXPRESSIONS`). The codes of a problem inside an
 * expression are the language's, described in language/hints.ts and linked by
 * language/diagnosticDocs.ts; `problemDocsFor` picks between the two by what found the
 * problem, as `unknown-field` and `plan-required` are codes of both.
 *
 * `rulesmith check --format sarif` describes its tool rules with it (cli/sarif.ts), the
 * editor links the ruleset and Terraform diagnostics' codes with it (lsp/), and docs/cli.md
 * "Ruleset and Terraform codes" is `problemDescriptionsMarkdown()` (a test compares). A
 * `Record` over every code, so a new code does not compile until it is described and linked
 * here. The Terraform codes are listed here, not in terraform/, because the core cannot
 * import that folder and the table is one.
 *
 * Pure: data and string functions.
 */
import { languageDocsFor } from '../language/diagnosticDocs';
import { RULESET_PROBLEM_CODES, type RulesetProblemCode } from './rulesetChecker';

/** The codes the Terraform checks add to the validator's and the language's (terraform/check.ts types its problems with them). */
export const TERRAFORM_PROBLEM_CODES = ['invalid-hcl', 'interpolated-expression'] as const;
export type TerraformProblemCode = (typeof TERRAFORM_PROBLEM_CODES)[number];

/** `rulesmith check` on a JSON file in which no rule has an expression (cli/check.ts). */
export const NO_EXPRESSIONS = 'no-expressions';

export type ProblemCode = RulesetProblemCode | TerraformProblemCode | typeof NO_EXPRESSIONS;

/** Every code the table describes, in its order. */
export const PROBLEM_CODES: readonly ProblemCode[] = [...RULESET_PROBLEM_CODES, ...TERRAFORM_PROBLEM_CODES, NO_EXPRESSIONS];

export const PROBLEM_DESCRIPTIONS: Readonly<Record<ProblemCode, string>> = {
  'invalid-json':
    'The file is not valid JSON: a missing comma or bracket, an unterminated string, a trailing comma or a comment. The Rulesets API refuses a body it cannot parse, and the checks only see what parses: fix the syntax at the reported place first.',
  'duplicate-key':
    'An object has the same key twice. The hosted API keeps the last value while editors and most tools show the first, so what you review is not what is deployed: keep one.',
  'wrong-type':
    'A value has another JSON type than the API expects there (a string for a number, an object for an array). The Rulesets API decodes strictly and refuses the whole request: write the value with the type the message names.',
  'unknown-field':
    'The object has a key (in Terraform, an attribute or block) that the Rulesets API does not accept in that place. The API decodes strictly and refuses the whole request with `invalid JSON: unknown field`: correct the spelling (the hint suggests the nearest key) or remove it.',
  'missing-field':
    'A key the API requires is absent, such as a rule’s `action`, the `id` of the ruleset an `execute` rule runs, a block response’s `status_code`, `content` and `content_type`, or a rate limiting rule’s `ratelimit`. The hosted API refuses the rule: add the key the message names.',
  'invalid-value':
    'The value has the right type but is not one the API accepts: a blank string, an id that is not 32 lowercase hexadecimal characters, a `kind` or `phase` outside the API’s list, a repeated item. The API answers `… is not a valid value for …` and refuses the request: use a value the message or hint gives.',
  'unknown-action':
    'The rule’s `action` is not an action of the Rulesets API, which answers `unknown variant for action`. Use one of the actions the hint lists: `allow` and `bypass` belong to the old firewall rules, and `skip` replaces them.',
  'action-not-in-phase':
    'The action exists, but not in this ruleset’s phase and kind: the managed phases take only `execute` and `skip`, and an account’s root ruleset in the custom and rate limiting phases only `execute`. The hosted API refuses the rule: use an action the hint lists, or move the rule to a ruleset of a phase that has it.',
  'plan-required':
    'The rule uses something above the zone’s plan (`--plan`, in the editor `rulesmith.plan`): the `log` action in custom rules or payload logging (`matched_data`), both Enterprise only, a managed ruleset the plan is not entitled to, a rate limiting setting above the plan (a longer period or timeout, a characteristic, a counting expression, complexity-based counting, a challenge that does not throttle), or inside an expression a field or function. The hosted API refuses it (a managed ruleset above the plan fails the whole write of the ruleset): remove it, or deploy to a zone on that plan.',
  'invalid-action-parameters':
    'The `action_parameters` do not fit the action: parameters on an action that takes none, a block response outside status 400–499, over its size limit or with another content type, `skip` keys that cannot be combined, an empty or ineffective override. Errors are refused by the hosted API and warnings have no effect there: change the parameters as the message says.',
  'logging-not-allowed':
    '`logging` is only valid on a `skip` rule; on any other action the API refuses the rule (`logging options only allowed in the skip action`). Remove it: the other actions are logged or not by their own nature.',
  'ratelimit-not-in-phase':
    'A `ratelimit` object has no effect outside the `http_ratelimit` phase: the rule counts no requests and acts on every match. Move the rule to the zone’s rate limiting ruleset, or remove `ratelimit`.',
  'unknown-managed-ruleset':
    'The ruleset id (of an `execute` rule, or in a `skip` rule’s `rulesets` or `rules`) is not a managed ruleset the checker knows, nor a custom ruleset given with the files. In the managed phases, which deploy only managed rulesets, it is an error; elsewhere a warning, as it may be a custom ruleset of the account: check the id against the managed rulesets the hint lists, or check the custom ruleset’s file with it.',
  'unknown-ruleset-version':
    'The `execute` rule pins a version the managed ruleset does not have, which the service cannot deploy. Use `"latest"` or a version the hint lists.',
  'execute-phase-mismatch':
    'A managed ruleset runs only in its own phase, and this `execute` rule deploys it from a ruleset of another phase; the hosted API refuses it. Deploy it from the entry point of its phase (the WAF’s managed rulesets: `http_request_firewall_managed`).',
  'unknown-category':
    'A category override names a tag that no rule of the managed ruleset (at the deployed version) has, so it changes nothing and the rules meant keep their default action. Use one of the ruleset’s categories (completion lists them).',
  'unknown-rule-id':
    'A rule override, or a `skip` rule’s `rules`, names an id that is not a rule of the managed ruleset at the deployed version, so it applies to nothing. Use the 32-character id of one of its rules (completion lists them with their descriptions).',
  'misplaced-score-threshold':
    '`score_threshold` only has an effect in a rule override of the anomaly-score rule of a scored managed ruleset (the OWASP Core Ruleset). Where the API does not take it (in `action_parameters`, ruleset-wide or on a category) the write is refused, and where it does (on the rule itself, on another rule’s override) it is ignored and the threshold stays where it was. Move it into a rule override of the anomaly-score rule (25 High, 40 Medium, 60 Low).',
  'misplaced-override-action':
    'An action overridden ruleset-wide or on a category of a scored managed ruleset (the OWASP Core Ruleset) replaces the `score` action of its rules: each matching rule then acts on its own instead of adding to the anomaly score. To choose what happens at the threshold, set the action on the anomaly-score rule’s override instead.',
  'invalid-override-action':
    'An override can only set `block`, `challenge`, `js_challenge`, `managed_challenge` or `log`: `allow` and `bypass` do not exist in rulesets, and `score` has no increment an override could give. Use one of those five, or exempt requests with a `skip` rule placed before the `execute` rule.',
  'duplicate-override':
    'The same category or rule is overridden twice in one `execute` rule; the later entry wins for the properties both set, which is rarely what was meant. Merge the two entries into one.',
  'duplicate-id':
    'Two rules of the ruleset have the same `id`, which must be unique in a ruleset, so the write is refused. Remove the id from the copy, and the API gives it a new one.',
  'duplicate-ref':
    'Two rules of the ruleset have the same `ref` (a rule without one has its id as ref), which must be unique in a ruleset, so the write is refused. Give each rule its own ref.',
  'duplicate-execute':
    'A zone deploys each managed ruleset once, and two enabled `execute` rules of its entry point run the same one; the hosted API refuses the write. Merge them into one `execute` rule whose expression covers both cases, with one set of overrides.',
  'owasp-all-paranoia-levels':
    'The OWASP Core Ruleset is deployed with no paranoia-level override, so all four levels (PL1–PL4) run; the higher levels block far more legitimate traffic. Start at PL1, as the dashboard does: disable the categories `paranoia-level-2`, `paranoia-level-3` and `paranoia-level-4`.',
  'missing-ref':
    'The rule has no `ref`. When a write replaces a ruleset’s rules, the service keeps a rule’s id by its matching ref (Terraform relies on it), so without one a deploy that does not send the id gives the rule a new one: add a ref unique in the ruleset (the editor’s quick fix suggests one).',
  'missing-expression':
    'The rule has no `expression`, which the hosted API reads as a blank one and refuses (`the expression cannot be blank`). Add the expression; `true` matches every request.',
  'action-parameters-required':
    'A `set_config` rule needs `action_parameters` saying which settings it changes; without them the hosted API refuses it (`action parameters are required for the set_config action`). Add the parameters, or remove the rule.',
  'execute-self':
    'The `execute` rule runs the ruleset it belongs to, which the service refuses. Run another ruleset. (The rules service reports it, as it knows each ruleset’s id.)',
  'execute-target-unknown':
    'The `execute` rule runs an id that is neither a managed ruleset nor a custom ruleset of the account, so the service refuses it. Create the custom ruleset first, or correct the id. (The rules service reports it, knowing every custom ruleset of the account.)',
  'execute-target-phase':
    'The `execute` rule runs a custom ruleset of another phase; a custom ruleset runs only from an entry point of its own phase, so the service refuses it. Execute it from that phase’s entry point. (The rules service reports it, knowing every custom ruleset of the account.)',
  'invalid-hcl':
    'The `.tf` file is not valid HCL: the message is from HashiCorp’s own parser, the one Terraform uses, so `terraform plan` refuses the file too. Fix the syntax at the reported place; until the file parses, `rulesmith check` checks none of its rules.',
  'interpolated-expression':
    'An expression depends on a Terraform value (`${var.host}`, a variable, a function call) that is known only at `terraform plan`, so that part is not checked. A note, not a problem: an interpolation inside a string of the expression lets the rest be checked, while anywhere else the whole expression is skipped.',
  'no-expressions':
    'The JSON file has no rule with an `expression`: it is not a ruleset, an API response with `result.rules` or an array of rules, so nothing in it was checked (a warning). Leave the file out of the check, or give the ruleset it was meant to be. A file of several rulesets (a zone file with `entryPoints` or phases as keys, a list of rulesets, an API answer listing them) is an error, never a pass: give each ruleset its own file, or read it with `eval --config` or `preview`.',
};

const CF = 'https://developers.cloudflare.com/';
const RULESETS_API = `${CF}ruleset-engine/rulesets-api/`;
const JSON_OBJECT = `${RULESETS_API}json-object/`;
const ACTIONS = `${CF}ruleset-engine/rules-language/actions/`;
const DEPLOY = `${CF}ruleset-engine/managed-rulesets/deploy-managed-ruleset/`;
const OVERRIDE = `${CF}ruleset-engine/managed-rulesets/override-managed-ruleset/`;
const OWASP = `${CF}waf/managed-rules/reference/owasp-core-ruleset/`;

/** The documentation page of each code: the Rulesets API's JSON object, the actions, managed rulesets and their overrides, Terraform. */
export const PROBLEM_DOCS: Readonly<Record<ProblemCode, string>> = {
  'invalid-json': RULESETS_API,
  'duplicate-key': RULESETS_API,
  'wrong-type': JSON_OBJECT,
  'unknown-field': JSON_OBJECT,
  'missing-field': JSON_OBJECT,
  'invalid-value': JSON_OBJECT,
  'unknown-action': ACTIONS,
  'action-not-in-phase': ACTIONS,
  'plan-required': JSON_OBJECT,
  'invalid-action-parameters': ACTIONS,
  'logging-not-allowed': `${CF}waf/custom-rules/skip/options/`,
  'ratelimit-not-in-phase': `${CF}waf/rate-limiting-rules/`,
  'unknown-managed-ruleset': `${CF}waf/managed-rules/`,
  'unknown-ruleset-version': DEPLOY,
  'execute-phase-mismatch': DEPLOY,
  'unknown-category': OVERRIDE,
  'unknown-rule-id': OVERRIDE,
  'misplaced-score-threshold': OWASP,
  'misplaced-override-action': OWASP,
  'invalid-override-action': OVERRIDE,
  'duplicate-override': OVERRIDE,
  'duplicate-id': JSON_OBJECT,
  'duplicate-ref': JSON_OBJECT,
  'duplicate-execute': DEPLOY,
  'owasp-all-paranoia-levels': `${OWASP}concepts/`,
  'missing-ref': JSON_OBJECT,
  'missing-expression': JSON_OBJECT,
  'action-parameters-required': ACTIONS,
  'execute-self': RULESETS_API,
  'execute-target-unknown': RULESETS_API,
  'execute-target-phase': RULESETS_API,
  'invalid-hcl': `${CF}terraform/`,
  'interpolated-expression': `${CF}terraform/`,
  'no-expressions': RULESETS_API,
};

/**
 * What found a problem: the language's checks of an expression (a language code), the
 * ruleset validator or `check`'s reading of a JSON file (a ruleset code), or the Terraform
 * checks' own (`TERRAFORM_PROBLEM_CODES`).
 */
export type ProblemOrigin = 'expression' | 'ruleset' | 'terraform';

/**
 * What found a problem of a `.tf` file (terraform/check.ts's `TfProblem`, which carries the
 * checked text of an expression's problem): the language, else the Terraform checks for
 * their own codes, else the ruleset validator (a `cloudflare_ruleset`).
 */
export function terraformProblemOrigin(p: { readonly code: string; readonly expression?: unknown }): ProblemOrigin {
  if (p.expression !== undefined) return 'expression';
  return (TERRAFORM_PROBLEM_CODES as readonly string[]).includes(p.code) ? 'terraform' : 'ruleset';
}

/**
 * The documentation page of a problem's code: for a problem the ruleset or Terraform checks
 * found, this table's page; for an expression's problem, and any code the table lacks, the
 * language's (language/diagnosticDocs.ts). By origin, not by code alone: `unknown-field` and
 * `plan-required` are an unknown JSON key and an action, logging or ruleset above the plan
 * here, a name that is not a field and a field above the plan in an expression.
 */
export function problemDocsFor(code: string, origin: ProblemOrigin): string {
  return origin !== 'expression' && Object.hasOwn(PROBLEM_DOCS, code) ? PROBLEM_DOCS[code as ProblemCode] : languageDocsFor(code);
}

/** The codes and their descriptions as a Markdown table (docs/cli.md holds it; a test compares). */
export function problemDescriptionsMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = PROBLEM_CODES.map((code) => `| \`${code}\` | ${cell(PROBLEM_DESCRIPTIONS[code])} |`);
  return ['| code | what it means and what to do |', '|---|---|', ...rows].join('\n');
}
