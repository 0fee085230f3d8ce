import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.data/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='Math'][property.name='random']", message: 'Inject randomness.' },
      ],
    },
  },
  {
    files: ['src/domain/**', 'src/routing/**', 'src/ledger/movements.ts', 'src/workers/**/decide.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='Date'][property.name='now']", message: 'Use the injected clock.' },
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Use config.' },
      ],
    },
  },
);
