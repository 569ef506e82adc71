#!/usr/bin/env node
// pullfleet CLI entry. Installed, it runs the compiled program (lib/). In a checkout of the repository
// (src/ beside bin/) it runs the TypeScript sources through tsx instead, so no build is needed there and
// a stale lib/ is never used. src/cli/program.ts loads only the module of the command given (none for
// --version), so only the commands that talk to a cluster load the Kubernetes client.
import { existsSync } from 'node:fs';

// The commands whose modules load @kubernetes/client-node (CLUSTER_COMMAND_NAMES of src/cli/program.ts; a
// test keeps the two equal). A start-up hint only: in a checkout, every module loaded after tsx's hooks are
// registered passes through them, which doubles the time the client's 800-odd modules take to load, so
// for these commands it is loaded first, natively, and the program finds it in the module cache.
const CLUSTER_COMMANDS = new Set(['status', 'inventory', 'migrate']);

const source = new URL('../src/cli/program.ts', import.meta.url);
let program;
if (existsSync(source)) {
  if (CLUSTER_COMMANDS.has(process.argv[2])) await import('@kubernetes/client-node');
  const { register } = await import('tsx/esm/api');
  register();
  program = await import(source.href);
} else {
  program = await import('../lib/src/cli/program.js');
}
await program.main(process.argv);
