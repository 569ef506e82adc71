/**
 * What `pullfleet synth` and `pullfleet validate` share with the fleet program they run: the environment
 * variables they pass and the timings the program reports. A module of its own, without imports, so the
 * CLI reads them without loading the construct library.
 */

/** Environment variable: when set, synth writes its findings there as JSON (`pullfleet validate -o json`). */
export const REPORT_FILE_ENV = 'PULLFLEET_REPORT_FILE';
/** Environment variable: `1` turns warnings into errors (`--strict`). */
export const STRICT_ENV = 'PULLFLEET_STRICT';
/** Environment variable: the output folder of the previous synth (`pullfleet synth` sets it before the swap). */
export const PREVIOUS_OUTPUT_ENV = 'PULLFLEET_PREVIOUS_OUTPUT';
/** Environment variable: when set, synth writes where its time went there as JSON (`pullfleet synth --verbose`). */
export const TIMINGS_FILE_ENV = 'PULLFLEET_TIMINGS_FILE';

/** Where the time of `Fleet.synth()` went, in milliseconds (written to $PULLFLEET_TIMINGS_FILE). */
export interface SynthTimings {
  /** From the start of the process to the Fleet's constructor: node, module loading, the fleet's own code before it. */
  readonly start: number;
  /** From the Fleet's constructor to its first rendering: the fleet description building its construct tree. */
  readonly constructs: number;
  /** Late objects and provenance (the hubs render once, just before validation). */
  readonly render: number;
  /** Objects turned into JSON (cdk8s resolves every value). */
  readonly json: number;
  /** Schema and rule checks of every object, and the fleet-wide checks. */
  readonly validate: number;
  /** YAML of every file. */
  readonly yaml: number;
  /** Writing the files: the writes themselves, or the wait for the thread that writes them. */
  readonly write: number;
  /** Objects and files written. */
  readonly objects: number;
  readonly files: number;
}

/** Environment variable: set (to `1`) when a pullfleet command (synth, validate, plan) runs the fleet program. */
export const CLI_ENV = 'PULLFLEET_CLI';
/** Environment variable: the fleet description's file, relative to the project folder (named in generated files). */
export const FLEET_FILE_ENV = 'PULLFLEET_FLEET_FILE';
