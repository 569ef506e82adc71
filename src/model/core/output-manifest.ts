/**
 * The manifest every synth leaves in its output folder (`.pullfleet`): the files it wrote, one per line.
 * `pullfleet synth` replaces an output folder only while it holds nothing but what its manifest lists;
 * a bare `cdk8s synth` of the fleet writes the same manifest, so both produce the same folder.
 */

/** The manifest's name inside the output folder. */
export const MANIFEST_FILE = '.pullfleet';

const MANIFEST_HEADER =
  '# Written by pullfleet synth: every file it wrote into this folder, one per line. pullfleet synth replaces this folder only while it holds nothing else.\n';

/** The manifest's content for these files (paths relative to the output folder, `/`-separated). */
export function renderManifest(files: Iterable<string>): string {
  return (
    MANIFEST_HEADER +
    [...files]
      .filter((f) => f !== MANIFEST_FILE)
      .sort()
      .map((f) => `${f}\n`)
      .join('')
  );
}
