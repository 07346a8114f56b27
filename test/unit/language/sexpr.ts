// Prints a syntax tree as a compact S-expression so that tests can state structure
// (precedence, grouping, argument shapes) exactly and readably.
import type * as A from '../../../server/src/language/ast';

export function sexpr(n: A.Expr | A.Argument | A.Rhs | A.IndexKey): string {
  switch (n.kind) {
    case 'logical':
      return `(${n.op} ${n.items.map(sexpr).join(' ')})`;
    case 'not':
      return `(not ${sexpr(n.operand)})`;
    case 'group':
      return `(group ${sexpr(n.inner)})`;
    case 'quantifier':
      return `(${n.name} ${sexpr(n.arg)})`;
    case 'comparison':
      return n.op ? `(${n.op.op} ${sexpr(n.lhs)} ${sexpr(n.rhs!)})` : sexpr(n.lhs);
    case 'field':
      return n.name;
    case 'call':
      return `${n.name}(${n.args.map(sexpr).join(', ')})`;
    case 'index':
      return `${sexpr(n.target)}[${n.key.kind === 'each' ? '*' : n.key.literal.text}]`;
    case 'literal':
      return n.text;
    case 'set':
      return `{${n.items.map(sexpr).join(' ')}}`;
    case 'list':
      return `$${n.name}`;
    case 'each':
      return '*';
    case 'key':
      return n.literal.text;
  }
}
