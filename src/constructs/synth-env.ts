/**
 * The environment variables through which `pullfleet synth` and `pullfleet validate` talk to the fleet
 * program they run. A module of its own, without imports, so the CLI reads the names without loading the
 * construct library.
 */

/** Environment variable: when set, synth writes its findings there as JSON (`pullfleet validate -o json`). */
export const REPORT_FILE_ENV = 'PULLFLEET_REPORT_FILE';
/** Environment variable: `1` turns warnings into errors (`--strict`). */
export const STRICT_ENV = 'PULLFLEET_STRICT';
/** Environment variable: the output folder of the previous synth (`pullfleet synth` sets it before the swap). */
export const PREVIOUS_OUTPUT_ENV = 'PULLFLEET_PREVIOUS_OUTPUT';
/** Environment variable: when set, synth writes where its time went there as JSON (`pullfleet synth --verbose`). */
export const TIMINGS_FILE_ENV = 'PULLFLEET_TIMINGS_FILE';
