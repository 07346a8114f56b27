// Packages the built extension into a .vsix: `node scripts/package.mjs [-o FILE]` (`npm run
// package` builds first). One place for vsce's options, used by `npm run package`,
// `npm start` and the real-VS-Code tests:
//   --no-dependencies            the bundles in client/out and server/out carry what they use
//   --allow-missing-repository   no public repository URL yet
//   --no-rewrite-relative-links  the README links docs/ and ARCHITECTURE.md in the repository;
//                                the .vsix does not ship them, and vsce refuses to rewrite
//                                relative links without a repository URL
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const VSCE_PACKAGE = ['package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links'];
export const VSCE = fileURLToPath(new URL('../node_modules/@vscode/vsce/vsce', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = spawnSync(process.execPath, [VSCE, ...VSCE_PACKAGE, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
