// Entry point of the in-host test suite: VS Code loads this file as the
// extensionTestsPath and awaits run(), exactly as @vscode/test-electron does on a
// desktop VS Code. The tests run inside the extension host with the real `vscode` API.
// Plain JavaScript (CommonJS) so that nothing needs compiling, and named *.test.js so
// that node's own test runner (which takes *.test.ts) never picks these files up.
const fs = require('node:fs');
const path = require('node:path');
// mocha 12 is an ES module; its CommonJS build loads with a plain require.
const Mocha = require('mocha/lib/mocha.cjs');

const BEGIN = '--- rulesmith in-host suite: begin ---';
const END = '--- rulesmith in-host suite: end ---';

/** Runs the `*.test.js` files of `dir` (this folder; demo/ has its own entry, demo/index.js). */
function runIn(dir) {
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 60_000, slow: 5_000 });
  const grep = process.env.RULESMITH_E2E_GREP;
  if (grep) mocha.grep(grep);
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.test.js')) mocha.addFile(path.join(dir, name));
  }
  // The driver prints what comes between these markers (the workbench logs through the
  // same channel).
  console.log(BEGIN);
  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => {
        console.log(END);
        if (failures > 0) reject(new Error(`${failures} in-host test(s) failed`));
        else resolve();
      });
    } catch (error) {
      reject(error);
    }
  });
}

exports.runIn = runIn;
exports.run = () => runIn(__dirname);
