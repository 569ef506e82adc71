#!/usr/bin/env node
// pullfleet CLI entry: registers tsx so the TypeScript sources run directly, then runs the program
// (src/cli/program.ts loads the Kubernetes client only for the commands that talk to a cluster).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/program.ts');
await main(process.argv);
