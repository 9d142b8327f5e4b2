/**
 * `local/function-own-lines` (issue 38): no function longer than `max` lines of its own. A
 * function's own lines are the lines of its span that no function nested in it (declaration,
 * expression, arrow, method, constructor, accessor), directly or not, spans: a plugin whose
 * handlers are closures is measured by the code around them, each closure by itself. ESLint's
 * own max-lines-per-function counts the nested functions in their parent, so a plugin of twenty
 * short routes would be refused and a single long handler would hide among them.
 */

const FUNCTIONS = ['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'];

/** A method's, constructor's or accessor's function is counted from its definition: the line of its name is its own. */
function spanNodeOf(node) {
  const parent = node.parent;
  if (node.type !== 'FunctionExpression' || !parent) return node;
  if (parent.type === 'MethodDefinition' || parent.type === 'TSAbstractMethodDefinition') return parent;
  if (parent.type === 'Property' && (parent.method || parent.kind !== 'init')) return parent;
  return node;
}

function nameOf(node, sourceCode) {
  if (node.id) return node.id.name;
  const parent = node.parent;
  if (parent?.type === 'VariableDeclarator') return sourceCode.getText(parent.id);
  if (parent?.type === 'MethodDefinition' && parent.kind === 'constructor') return 'constructor';
  if (['MethodDefinition', 'TSAbstractMethodDefinition', 'Property', 'PropertyDefinition'].includes(parent?.type)) {
    const key = sourceCode.getText(parent.key);
    return parent.computed ? `[${key}]` : key;
  }
  if (parent?.type === 'AssignmentExpression') return sourceCode.getText(parent.left);
  if (parent?.type === 'CallExpression' || parent?.type === 'NewExpression') {
    const callee = parent.callee.type === 'MemberExpression' ? parent.callee.property : parent.callee;
    return `a function passed to ${callee.type === 'Identifier' ? callee.name : 'a call'}`;
  }
  return 'a function';
}

/** Lines of [first, last] covered by none of `inner` (line ranges inside it, possibly overlapping). */
function linesLeft(first, last, inner) {
  let covered = 0;
  let next = first;
  for (const [start, end] of [...inner].sort((a, b) => a[0] - b[0])) {
    const from = Math.max(start, next);
    if (end >= from) {
      covered += end - from + 1;
      next = end + 1;
    }
  }
  return last - first + 1 - covered;
}

export default {
  meta: {
    type: 'suggestion',
    docs: { description: 'Limit the lines a function has of its own, nested functions apart' },
    schema: [
      {
        type: 'object',
        properties: { max: { type: 'integer', minimum: 0 } },
        additionalProperties: false,
      },
    ],
    messages: {
      tooLong:
        '{{name}} has {{own}} lines of its own ({{total}} with the functions inside it), more than {{max}}: split it by what it does.',
    },
  },
  create(context) {
    const max = context.options[0]?.max ?? 100;
    /** The functions being walked, outermost first, each with the line ranges of the functions directly in it. */
    const open = [];
    const enter = (node) => {
      const span = spanNodeOf(node);
      open.push({ node, span, inner: [] });
    };
    const exit = () => {
      const { node, span, inner } = open.pop();
      const first = span.loc.start.line;
      const last = span.loc.end.line;
      open.at(-1)?.inner.push([first, last]);
      const own = linesLeft(first, last, inner);
      if (own > max) {
        context.report({
          loc: span.loc.start,
          messageId: 'tooLong',
          data: { name: nameOf(node, context.sourceCode), own, total: last - first + 1, max },
        });
      }
    };
    return Object.fromEntries(FUNCTIONS.flatMap((type) => [[type, enter], [`${type}:exit`, exit]]));
  },
};
