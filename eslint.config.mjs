// `npm run lint` (also run by `npm test`): eslint's and typescript-eslint's recommended
// rules (syntax only, no type information, so it stays fast; `tsc` does the type-check).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * An object literal with a getter keeps whatever it reaches alive through V8's
 * young-generation collections until a full one: made per request, it promoted every
 * request's objects (docs/service.md, "Objects promoted by a getter"). Class getters and
 * Object.defineProperty with a shared getter do not.
 */
const NO_ACCESSOR_LITERAL = {
  selector: "Property[kind='get'], Property[kind='set']",
  message: 'An object literal with an accessor: use a class, or Object.defineProperty with one shared getter (docs/service.md, "Objects promoted by a getter").',
};

export default defineConfig(
  {
    // Generated (build output, the ohm bundle, the CRS conversion) and vendored files.
    ignores: [
      '**/out/',
      '**/*.ohm-bundle.*',
      'server/src/managed/generated/',
      'test/fixtures/',
      '.vscode-test/',
      'tmp/',
      '.demo/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // The code's own conventions: a leading _ marks a deliberately unused name, and an
      // empty `catch {}` is a deliberately ignored failure (best-effort clean-up).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // `cond ? a() : b()` as a statement is used on purpose (rulesets/engine.ts).
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true }],
      // Matching, escaping and refusing control characters is much of what the code does.
      'no-control-regex': 'off',
      // The code compares with === everywhere; the two exact number/bigint == say so.
      eqeqeq: 'error',
    },
  },
  {
    files: ['server/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', NO_ACCESSOR_LITERAL],
    },
  },
  {
    // The code that runs for every live request (the proxy, its worker, the rules engine): an
    // object literal that starts with a spread and adds properties (`{ ...base, kind }`) keeps
    // what it points to alive through young-generation collections in the same way, and is
    // several times slower to build; `Object.assign({}, base, { kind })` or the properties
    // written out do not (docs/proxy.md, "No spread-first objects per request"). A later
    // block's rule replaces an earlier one's for its files, so the accessor rule is given again.
    files: ['server/src/proxy/**/*.ts', 'server/src/orderedWorker.ts', 'server/src/rulesets/engine.ts', 'server/src/requests/fields.ts', 'server/src/requests/live.ts', 'server/src/evaluatedRequest.ts', 'server/src/service/events/fromEvaluation.ts', 'server/src/service/events/writer.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        NO_ACCESSOR_LITERAL,
        {
          selector: "ObjectExpression[properties.0.type='SpreadElement'][properties.length>1]",
          message: 'A spread-first object literal on the per-request path: use Object.assign({}, source, { … }) or write the properties out (docs/proxy.md, "No spread-first objects per request").',
        },
      ],
    },
  },
  {
    // Tests read the service's JSON answers loosely.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The in-host VS Code suite: plain CommonJS run by mocha.
    files: ['test/e2e/suite/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node, ...globals.mocha } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
