/**
 * The API reports in api/: one per entry point of package.json `exports`, made by api-extractor from the
 * compiled declarations in lib/ (the npm scripts build first). A report lists every name the entry point
 * exports with its signature, so a change to the public API is a change to a committed file.
 *
 *   npm run api          regenerate the reports (api-extractor --local) and name the ones that changed
 *   npm run api:check    fail when a report differs from what the code exports now (CI runs it)
 *
 * Each entry point has one config in api-extractor/ (api-extractor/base.json holds the shared settings),
 * which names its report: api-extractor/model.json writes api/pullfleet-model.api.md. An entry point
 * without a config, a config of no entry point, or a report no config writes fails both scripts.
 *
 * Usage: tsx scripts/api-report.ts [--local]
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const configDir = join(root, 'api-extractor');
const reportDir = join(root, 'api');
const local = process.argv.includes('--local');
const tool = local ? 'api' : 'api:check';

interface Target {
  /** The import specifier users write: `pullfleet`, `pullfleet/model`. */
  readonly entry: string;
  readonly config: ExtractorConfig;
  /** The committed report, relative to the repository root. */
  readonly report: string;
}

const problems: string[] = [];

/** Entry points of package.json `exports` by the declaration file they publish (`lib/src/index.d.ts`). */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const byTypes = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || !target.types) continue; // ./package.json
    byTypes.set(target.types.replace(/^\.\//, ''), subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`);
  }
  return byTypes;
}

function targets(): Target[] {
  if (!existsSync(join(root, 'lib'))) {
    console.error(`${tool}: lib/ is missing: run npm run build first (npm run ${tool} does)`);
    process.exit(1);
  }
  const entries = entryPoints();
  const found: Target[] = [];
  const files = readdirSync(configDir)
    .filter((file) => file.endsWith('.json') && file !== 'base.json')
    .sort();
  for (const file of files) {
    const config = ExtractorConfig.loadFileAndPrepare(join(configDir, file));
    const types = relative(root, config.mainEntryPointFilePath);
    const entry = entries.get(types);
    if (!entry) {
      problems.push(`api-extractor/${file} reads ${types}, which no entry point of package.json exports publishes`);
      continue;
    }
    entries.delete(types);
    const report = relative(root, join(config.reportFolder, config.reportConfigs[0].fileName));
    found.push({ entry, config, report });
  }
  for (const [types, entry] of entries)
    problems.push(`${entry} (${types}) has no config in api-extractor/: add one like api-extractor/model.json`);
  return found;
}

/** Runs api-extractor for one entry point; true when its report differs from the committed one. */
function run(target: Target): boolean {
  let diff = '';
  const result = Extractor.invoke(target.config, {
    localBuild: local,
    printApiReportDiff: !local,
    messageCallback: (message: ExtractorMessage) => {
      message.handled = true;
      switch (message.messageId) {
        case 'console-api-report-diff':
          diff = message.text;
          return;
        case 'console-api-report-not-copied':
        case 'console-api-report-copied':
        case 'console-api-report-created':
        case 'console-api-report-unchanged':
        case 'console-compiler-version-notice':
        case 'console-preamble':
        case 'console-writing-api-report':
          return; // what these say is said below, per entry point
      }
      if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning)
        problems.push(`${target.entry}: ${message.formatMessageWithLocation(root)}`);
    },
  });
  if (result.apiReportChanged && !local) {
    console.error(
      `${tool}: the public API of ${target.entry} changed: ${target.report} differs from what it exports now`,
    );
    if (diff) console.error(diff.replace(/^/gm, '  '));
  } else if (result.apiReportChanged) {
    console.log(`${tool}: ${target.report} updated (${target.entry}): review the change and commit it`);
  }
  return result.apiReportChanged;
}

const all = targets();
const changed = all.filter(run).map((target) => target.entry);

// A report no config writes any more (an entry point that was removed).
const written = new Set(all.map((target) => basename(target.report)));
for (const file of existsSync(reportDir) ? readdirSync(reportDir) : []) {
  if (!file.endsWith('.api.md') || written.has(file)) continue;
  if (local) {
    rmSync(join(reportDir, file));
    console.log(`${tool}: api/${file} removed: no entry point writes it`);
  } else problems.push(`api/${file} belongs to no entry point: run npm run api to remove it`);
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`${tool}: ${problem}`);
  console.error(
    `${tool}: fix the problems above (a type a public signature names must be exported by its entry point)`,
  );
  process.exit(1);
}
if (changed.length > 0 && !local) {
  console.error(
    `${tool}: changed: ${changed.join(', ')}; run npm run api and commit the report if the change is intended`,
  );
  process.exit(1);
}
if (changed.length === 0) console.log(`${tool}: ${all.map((target) => target.report).join(', ')} up to date`);
