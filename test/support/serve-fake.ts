/**
 * Runs the API double as a standalone server until interrupted, writing a kubeconfig for it:
 *
 *   npx tsx test/support/serve-fake.ts --kubeconfig /tmp/fake.kubeconfig
 *
 * Handy for trying the controller by hand (`npx pullfleet-controller --kubeconfig /tmp/fake.kubeconfig`)
 * or pointing the integration suite at it (PULLFLEET_E2E_KUBECONFIG=/tmp/fake.kubeconfig npm test -- test/integration).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startFakeApiServer } from './fake-apiserver.js';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string', default: 'fake.kubeconfig' } } });
const server = await startFakeApiServer();
writeFileSync(values.kubeconfig!, server.kubeConfigYaml());
process.stdout.write(`fake API server on ${server.url}; kubeconfig written to ${values.kubeconfig}\n`);
const shutdown = () => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
