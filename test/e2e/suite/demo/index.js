// Entry point of the in-host suite for the demo workspace (the folder `npm start` opens,
// made by scripts/demo-workspace.mjs): the driver (test/e2e/vscode.test.ts) opens that
// folder with this file as the extensionTestsPath, after the main suite.
exports.run = () => require('../index.js').runIn(__dirname);
