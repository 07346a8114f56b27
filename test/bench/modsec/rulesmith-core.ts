/**
 * What test/bench/crs.bench.ts needs from the core, in one entry point, so that the bench can
 * bundle it with esbuild the way scripts/build.mjs bundles the CLI and the language server
 * and time the code as it ships. (Under tsx every module is transformed with esbuild's
 * `keepNames`, which wraps each closure the engine creates in a `__name()` call; on this
 * corpus that makes request+eval about 20–25% slower than the shipped bundle.)
 */
export { defaultCatalog } from '../../../server/src/managed/catalog';
export { OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';
export { owaspRuleset } from '../../../server/src/managed/owasp';
export { PARANOIA_LEVELS, setParanoiaLevel, setScoreThreshold } from '../../../server/src/managed/preview';
export { rulesetVersion } from '../../../server/src/rulesets/catalog';
export { DEFAULT_CLIENT_IP, requestValues } from '../../../server/src/requests/fields';
export { ftwRuleId, parseFtwFile } from '../../../server/src/requests/ftw';
export { compileZone } from '../../../server/src/rulesets/engine';
