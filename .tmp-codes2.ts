import { checkExpression } from './server/src/language/index';
for (const [e, o] of [['http.host eq 5or(ssl)'], ['ip.src in $Office'], ['http.host eq ip.src'], ['concat("a", http.request.headers[*][0]) eq "a"'], ['ip.src in $nolist', { lists: ['x'] }], ['cf.waf.score lt 10'], ['url_decode(http.host, "q") eq "a"'], ['http.request.headers[x-id][0] eq "a"']] as [string, object?][]) {
  console.log(e, JSON.stringify(checkExpression(e, o as never).diagnostics.map((d) => [d.code, d.message, d.hint])));
}
