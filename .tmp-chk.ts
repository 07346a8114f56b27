import { checkExpression as check } from './server/src/language/index';
for (const e of process.argv.slice(2)) {
  const r = check(e);
  console.log(JSON.stringify(e), JSON.stringify(r.diagnostics, null, 0));
}
