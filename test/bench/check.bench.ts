// Check time (parse + check) for a typical rule and a 4 KB expression, next to the
// grammar alone (ohm matching) and wirefilter's own parser on the same text.
// Targets (issue #2): 4 KB median under 10 ms, typical rule under 0.5 ms.
import grammar from '../../server/src/language/rules.ohm-bundle';
import { checkExpression } from '../../server/src/language/index';
import { loadWirefilter } from '../diff/wirefilter';
import { medianNs, ms, row } from './measure';

const typical =
  'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24 198.51.100.0/24} and http.request.method in {"POST" "PUT"}';
let big = typical;
while (big.length + typical.length + 6 < 4096) big += ` or (${typical})`;

const wf = loadWirefilter();
console.log('\ncheck (parse + check), median per expression');
console.log(row(['expression', 'chars', 'rulesmith check', 'ohm match only', 'wirefilter 0.7.0 parse'], [12, 6, 16, 15, 22]));
for (const [name, text] of [['typical', typical], ['4 KB', big]] as const) {
  if (checkExpression(text).diagnostics.length) throw new Error(`benchmark input has diagnostics: ${name}`);
  const ours = medianNs(() => checkExpression(text));
  const matchOnly = medianNs(() => grammar.match(text));
  const theirs = 'unavailable' in wf ? undefined : medianNs(() => wf.parse(text));
  console.log(row([name, String(text.length), ms(ours), ms(matchOnly), theirs === undefined ? `n/a (${(wf as { unavailable: string }).unavailable})` : ms(theirs)], [12, 6, 16, 15, 22]));
}
