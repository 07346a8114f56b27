/**
 * What test/bench/evaluate.bench.ts needs from the core, in one entry point, so that the
 * bench can bundle it with esbuild the way scripts/build.mjs bundles the CLI and time the
 * evaluator as it ships (tsx's `keepNames` wraps named closures; see ../modsec/rulesmith-core.ts).
 */
export { checkExpression, compileExpression, prepareFields } from '../../../server/src/language/index';
export { httpScheme } from '../../../server/src/language/scheme/index';
