/**
 * Runs the API double as a standalone server until interrupted, writing a kubeconfig for it:
 *
 *   npx tsx test/support/serve-fake.ts --kubeconfig /tmp/fake.kubeconfig
 *
 * `--seed <n>` runs the realistic mode with that seed (delayed watch events, disconnects, 410s, 429s,
 * held requests). Handy for trying the controller by hand (`npx pullfleet-controller --kubeconfig /tmp/fake.kubeconfig`)
 * or pointing the real-server suites at it (PULLFLEET_E2E_KUBECONFIG=/tmp/fake.kubeconfig npm run test:envtest).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startFakeApiServer } from '../double/fake-apiserver.js';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string', default: 'fake.kubeconfig' }, seed: { type: 'string' } },
});
const seed = values.seed === undefined ? undefined : Number(values.seed);
if (seed !== undefined && !Number.isInteger(seed))
  throw new Error(`--seed must be an integer, got ${JSON.stringify(values.seed)}`);
const server = await startFakeApiServer(seed === undefined ? {} : { realism: { seed } });
writeFileSync(values.kubeconfig, server.kubeConfigYaml());
process.stdout.write(
  `fake API server on ${server.url}${seed === undefined ? '' : ` (realistic, seed ${seed})`}; kubeconfig written to ${values.kubeconfig}\n`,
);
const shutdown = () => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
