#!/usr/bin/env node
// pullfleet CLI entry. Installed, it runs the compiled program (lib/). In a checkout of the repository
// (src/ beside bin/) it runs the TypeScript sources through tsx instead, so no build is needed there and
// a stale lib/ is never used. src/cli/program.ts loads the Kubernetes client only for the commands that
// talk to a cluster.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/program.ts', import.meta.url);
let program;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  program = await import(source.href);
} else {
  program = await import('../lib/src/cli/program.js');
}
await program.main(process.argv);
