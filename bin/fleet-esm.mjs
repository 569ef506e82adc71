// Loaded by `pullfleet synth`, `validate` and `plan` (through NODE_OPTIONS=--import) when the fleet
// description sits in a package without "type": "module": registers bin/fleet-esm-hooks.mjs, which
// loads the project's own .ts and .tsx files as ES modules, as "type": "module" would. Without it tsx
// runs them as CommonJS and turns pullfleet's ES modules into CommonJS too, which cannot import the
// ES-only packages pullfleet uses. See src/cli/support/fleet-module.ts.
import { register } from 'node:module';

const scope = process.env.PULLFLEET_ESM_SCOPE;
if (scope) register(new URL('./fleet-esm-hooks.mjs', import.meta.url), { data: { scope } });
