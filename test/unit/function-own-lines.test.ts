import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The rule that keeps every function of src/ within 100 lines of its own (issue 38;
 * eslint-rules/function-own-lines.js), run with the configuration `npm run lint` uses, on code
 * put at a path of src/.
 */
const RULE = 'local/function-own-lines';

/** `n` lines of statements, indented. */
const statements = (n: number, indent = '  '): string[] => Array.from({ length: n }, (_, i) => `${indent}void ${i};`);

/** A function declaration spanning `lines` lines, with `inner` (whole lines) in its body. */
const declaration = (name: string, lines: number, inner: string[] = []): string[] => [
  `export function ${name}(): void {`,
  ...inner,
  ...statements(lines - 2 - inner.length),
  '}',
];

/** An arrow function assigned in a body, spanning `lines` lines. */
const arrow = (name: string, lines: number): string[] => [`  const ${name} = (): void => {`, ...statements(lines - 2, '    '), '  };'];

const CASES: Record<string, string[]> = {
  hundred: declaration('hundred', 100),
  hundredAndOne: declaration('hundredAndOne', 101),
  // 150 lines, 50 of them an arrow inside it: 100 of its own.
  parentOfArrow: declaration('parentOfArrow', 150, arrow('inner', 50)),
  // 152 lines, 51 of them an arrow inside it, itself holding a 20-line one: 101 of its own.
  parentOfNested: declaration('parentOfNested', 152, [
    '  const outer = (): void => {',
    ...arrow('deeper', 20).map((line) => `  ${line}`),
    ...statements(29, '    '),
    '  };',
  ]),
  // A short function holding a long one: the long one is refused, its parent is not.
  shortParent: declaration('shortParent', 110, arrow('longChild', 101)),
  // Two functions on one line take that line from their parent once.
  sharedLine: declaration('sharedLine', 102, ['  [1].map((a) => a).filter((b) => b);']),
  methods: [
    'export class Player {',
    '  constructor() {',
    ...statements(99, '    '),
    '  }',
    '  play(): void {',
    ...statements(98, '    '),
    '  }',
    '  get volume(): number {',
    ...statements(98, '    '),
    '    return 1;',
    '  }',
    '}',
  ],
  objectMethod: ['export const handlers = {', '  ready(): void {', ...statements(99, '    '), '  },', '};'],
};

/** Each case's messages, as [line in the case, message]. */
const found = new Map<string, [number, string][]>();

beforeAll(async () => {
  const eslint = new ESLint({
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    ruleFilter: ({ ruleId }) => ruleId === RULE,
    // The rule reads syntax only: without type information each lint takes milliseconds.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
  for (const [name, lines] of Object.entries(CASES)) {
    const [result] = await eslint.lintText(lines.join('\n'), { filePath: 'src/modules/example/routes.ts' });
    const messages = (result?.messages ?? []).filter((m) => m.ruleId === RULE || m.fatal);
    found.set(name, messages.map((m) => [m.line, m.message]));
  }
}, 180_000);

describe('no function of src/ past 100 lines of its own (eslint-rules/function-own-lines.js)', () => {
  it('passes a function of 100 lines', () => {
    expect(found.get('hundred')).toEqual([]);
  });

  it('refuses a function of 101 lines, naming it and its count', () => {
    expect(found.get('hundredAndOne')).toEqual([
      [1, 'hundredAndOne has 101 lines of its own (101 with the functions inside it), more than 100: split it by what it does.'],
    ]);
  });

  it('does not count the lines of a function nested in it', () => {
    expect(found.get('parentOfArrow')).toEqual([]);
  });

  it('counts what is left once every nested function, nested however deep, is taken out', () => {
    expect(found.get('parentOfNested')).toEqual([
      [1, 'parentOfNested has 101 lines of its own (152 with the functions inside it), more than 100: split it by what it does.'],
    ]);
  });

  it('refuses a long function nested in a short one, and not the short one', () => {
    expect(found.get('shortParent')).toEqual([
      [2, 'longChild has 101 lines of its own (101 with the functions inside it), more than 100: split it by what it does.'],
    ]);
  });

  it('takes a line shared by two nested functions from their parent once', () => {
    expect(found.get('sharedLine')).toEqual([
      [1, 'sharedLine has 101 lines of its own (102 with the functions inside it), more than 100: split it by what it does.'],
    ]);
  });

  it('measures constructors, methods and accessors from the line of their name', () => {
    expect(found.get('methods')).toEqual([
      [2, 'constructor has 101 lines of its own (101 with the functions inside it), more than 100: split it by what it does.'],
      [203, 'volume has 101 lines of its own (101 with the functions inside it), more than 100: split it by what it does.'],
    ]);
    expect(found.get('objectMethod')).toEqual([
      [2, 'ready has 101 lines of its own (101 with the functions inside it), more than 100: split it by what it does.'],
    ]);
  });
});
