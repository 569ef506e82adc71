/** Entry point of `pullfleet-controller` (bin/pullfleet-controller.js). */
import { main } from './cli.js';

main().catch((error: unknown) => {
  // Only start-up failures land here (bad flags, unreadable kubeconfig); watches never exit the process.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
