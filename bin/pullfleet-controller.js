#!/usr/bin/env node
// Entry point of the pullfleet hub controller: runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/controller/main.ts');
