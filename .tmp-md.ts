import { codeHelpMarkdown } from './server/src/language/hints';
console.log(codeHelpMarkdown());
