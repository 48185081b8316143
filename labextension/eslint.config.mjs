// ESLint (flat config): typescript-eslint's recommended rules on the sources and the tests; the
// layout is prettier's (`npm run lint` runs both, `npm run format` fixes what they can).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      // JupyterLab's idiom for command ids (`CommandIDs.open`)
      '@typescript-eslint/no-namespace': 'off',
      curly: 'error',
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error'
    }
  },
  { files: ['*.mjs'], languageOptions: { globals: { ...globals.node } } },
  prettier
);
