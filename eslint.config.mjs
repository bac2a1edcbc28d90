// @ts-check
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // Generated output and other packages' code; bench/agents/frameworks/*.js are compiled from the .ts beside them.
    ignores: ['dist*/**', '**/node_modules/**', 'coverage/**', 'bench/agents/build/**', 'bench/agents/frameworks/*.js', '.pgdata/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  comments.recommended,
  {
    // A disable that no longer suppresses anything is noise, and one without a reason cannot be reviewed.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      globals: { ...globals.node },
      // The project service picks each file's nearest tsconfig.json, so bench/agents keeps its own.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@eslint-community/eslint-comments/require-description': 'error',
      // Tools, stores and plans implement Promise-returning interfaces; an `async` method with
      // no await is how they satisfy one without wrapping every return in Promise.resolve.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore is how this code says "deliberately unused" (omitting a key from a rest copy, draining a stream).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Plain JavaScript is outside every tsconfig: no type information to lint with.
    files: ['**/*.{js,cjs,mjs}'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The README's quick start, byte for byte: a bare `main();` reads best there, and Node
    // already fails the process on the unhandled rejection a floating call could leave.
    files: ['examples/quick-start.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  // Last, so formatting is Prettier's alone.
  prettier,
);
