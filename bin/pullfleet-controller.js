#!/usr/bin/env node
// Entry point of the pullfleet hub controller. Installed (and in the image) it runs the compiled
// controller (lib/), without tsx or the TypeScript compiler. In a checkout of the repository (src/
// beside bin/) it runs the TypeScript sources through tsx instead.
import { existsSync } from 'node:fs';

const source = new URL('../src/controller/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../lib/src/controller/main.js');
}
