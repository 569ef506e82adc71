#!/usr/bin/env node
// pullfleet CLI entry: registers tsx so the TypeScript sources run directly, then runs the program.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
