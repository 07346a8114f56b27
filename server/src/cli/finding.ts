/**
 * One finding of `rulesmith check`, as `--format json` prints it and the SARIF and GitHub
 * formats (sarif.ts) read it: apart from check.ts, so that the formats do not import the command.
 */
import type { Diagnostic } from '../language/index';
import type { Position } from '../language/report';
import type { ProblemOrigin } from '../rulesets/problemDescriptions';

/** One finding, as printed by `--format json`. */
export interface Finding {
  readonly file: string | null;
  readonly rule: number | null;
  readonly range: { readonly start: Position; readonly end: Position };
  readonly severity: Diagnostic['severity'];
  readonly code: string;
  /**
   * What found it: the language's checks of an expression (`.cfrule`, `--expr`, a rule's
   * expression in JSON or `.tf`), the ruleset checks (ruleset JSON, a `cloudflare_ruleset`
   * resource, and `invalid-json`, `no-expressions`), or the Terraform checks' own
   * (`invalid-hcl`, `interpolated-expression`). A code the language and the ruleset
   * validator share (`unknown-field`, `plan-required`) means what its origin says.
   */
  readonly origin: ProblemOrigin;
  readonly message: string;
  readonly hint?: string;
  /** The Terraform resource (`cloudflare_ruleset.waf`) of a finding in a `.tf` file. */
  readonly resource?: string;
}
