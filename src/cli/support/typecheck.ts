/**
 * Type-checks the fleet description (`fleet.config.ts`) with the TypeScript compiler before `synth`,
 * `validate` and `plan` run it: tsx strips types without checking them, so without this a misspelt
 * prop or `destinationNamespace: 123` would synthesize. The program is the config's import graph; the
 * config and the fleet's own modules are checked (the pullfleet library and declarations only lend types),
 * with the project's tsconfig.json (unused-variable checks off, `skipLibCheck` on). An incremental
 * build-info file and the content hashes of the last clean program are kept in
 * node_modules/.cache/pullfleet (PULLFLEET_CACHE_DIR overrides), so an unchanged fleet is not checked twice:
 * when the compiler version, the tsconfig.json files and every file of the last clean program are unchanged,
 * its result is reused without even loading the compiler.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as TS from 'typescript';
import { readCdk8sConfig } from './cdk8s-config.js';

export interface TypecheckResult {
  /** The file checked (absolute). */
  readonly file: string;
  /** One line per error: `file:line:col - error TSnnnn: message` (path relative to the project). */
  readonly errors: string[];
  /** Source files in the program (the config's import graph and the declarations it uses). */
  readonly files: number;
  /** Wall time of the check in milliseconds. */
  readonly ms: number;
  /** True when the program was byte-identical to that of the last clean check, whose result was reused. */
  readonly cached?: boolean;
}

const TS_FILE = /\.(?:m|c)?tsx?$/;

/** The pullfleet library's sources (src/), with a trailing separator. */
const LIBRARY_DIR = `${path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')}${path.sep}`;

/**
 * The TypeScript file an app command runs (`npx tsx fleet.config.ts` gives `fleet.config.ts`), or
 * undefined when the command runs none (then there is nothing to type-check).
 */
export function configFileOf(app: string, cwd: string): string | undefined {
  for (const word of app.split(/\s+/)) {
    const token = word.replace(/^['"]|['"]$/g, '');
    if (TS_FILE.test(token) && !token.endsWith('.d.ts') && fs.existsSync(path.resolve(cwd, token)))
      return path.resolve(cwd, token);
  }
  return undefined;
}

function loadTypescript(): typeof TS {
  const require = createRequire(import.meta.url);
  return require('typescript') as typeof TS;
}

/** Options from the tsconfig.json nearest to `file`, adjusted for a quick, error-only check. */
/** The tsconfig.json nearest to `file` (its folder or one above), as the compiler finds it; undefined when none. */
function nearestConfig(file: string): string | undefined {
  for (let at = path.dirname(file); ; at = path.dirname(at)) {
    const candidate = path.join(at, 'tsconfig.json');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(at) === at) return undefined;
  }
}

/** Where the build-info file of the check of `file` (with `configPath`) is kept; the stamp sits beside it. */
function buildInfoFile(file: string, configPath: string | undefined, cwd: string): string {
  const cacheDir = process.env.PULLFLEET_CACHE_DIR || path.join(cwd, 'node_modules', '.cache', 'pullfleet');
  const key = createHash('sha256')
    .update(`${configPath ?? ''}\0${file}`)
    .digest('hex')
    .slice(0, 16);
  return path.join(cacheDir, `typecheck-${key}.tsbuildinfo`);
}

/** The version of the TypeScript compiler pullfleet checks with, read without loading the compiler. */
function typescriptVersion(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require.resolve('typescript/package.json');
    return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function compilerOptions(
  ts: typeof TS,
  file: string,
  cwd: string,
): {
  options: TS.CompilerOptions;
  diagnostics: readonly TS.Diagnostic[];
  configPath?: string;
  /** Every configuration file read (the tsconfig.json and those it extends). */
  configFiles: string[];
} {
  const configPath = ts.findConfigFile(path.dirname(file), (f) => ts.sys.fileExists(f));
  const configFiles = new Set<string>(configPath ? [configPath] : []);
  let options: TS.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    esModuleInterop: true,
    resolveJsonModule: true,
  };
  let diagnostics: readonly TS.Diagnostic[] = [];
  if (configPath) {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      configPath,
      {},
      {
        ...ts.sys,
        readFile: (f) => {
          configFiles.add(path.resolve(f));
          return ts.sys.readFile(f);
        },
        onUnRecoverableConfigFileDiagnostic: (d) => (diagnostics = [d]),
      },
    );
    if (parsed) {
      options = parsed.options;
      diagnostics = parsed.errors.filter((d) => d.code !== 18003); // "no inputs found" does not matter: the config file is the input
    }
  }
  return {
    options: {
      ...options,
      noEmit: true,
      skipLibCheck: true,
      noUnusedLocals: false,
      noUnusedParameters: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      composite: false,
      incremental: true,
      tsBuildInfoFile: buildInfoFile(file, configPath, cwd),
    },
    diagnostics,
    configPath,
    configFiles: [...configFiles],
  };
}

function formatDiagnostic(ts: typeof TS, d: TS.Diagnostic, cwd: string): string {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
  if (!d.file || d.start === undefined) return `error TS${d.code}: ${message}`;
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
  const rel = path.relative(cwd, d.file.fileName) || d.file.fileName;
  return `${rel}:${line + 1}:${character + 1} - error TS${d.code}: ${message}`;
}

interface Stamp {
  readonly key: string;
  /**
   * What the check depends on besides file contents (the compiler version, the file, its tsconfig.json and
   * where the cache is), known without loading the compiler.
   */
  readonly probe?: string;
  /** Every file of the last clean program, configuration files included, with the SHA-256 of its content. */
  readonly files: Array<[string, string]>;
}

/** The probe of a check of `file` ({@link Stamp.probe}). */
function probeOf(version: string, file: string, configPath: string | undefined, buildInfo: string): string {
  return JSON.stringify([version, file, configPath ?? null, buildInfo]);
}

function digest(file: string): string | undefined {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

/**
 * The number of files of the last clean check, when it was made with `key` (or, without a key, `probe`)
 * and none of its files changed since; undefined otherwise.
 */
function unchangedSinceLastClean(stampFile: string, match: { key?: string; probe?: string }): number | undefined {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
  if (!Array.isArray(stamp.files)) return undefined;
  if (match.key !== undefined ? stamp.key !== match.key : match.probe === undefined || stamp.probe !== match.probe)
    return undefined;
  return stamp.files.every(([file, hash]) => digest(file) === hash) ? stamp.files.length : undefined;
}

/**
 * The result of the last clean check when nothing it depends on changed, found without loading the compiler
 * (loading it takes longer than the rest of such a check); undefined when the check has to run.
 */
function reusedCleanCheck(file: string, cwd: string, started: number): TypecheckResult | undefined {
  const version = typescriptVersion();
  if (version === undefined) return undefined;
  const configPath = nearestConfig(file);
  const buildInfo = buildInfoFile(file, configPath, cwd);
  const stampFile = buildInfo.replace(/\.tsbuildinfo$/, '.clean.json');
  const files = unchangedSinceLastClean(stampFile, { probe: probeOf(version, file, configPath, buildInfo) });
  return files === undefined ? undefined : { file, errors: [], files, ms: performance.now() - started, cached: true };
}

/**
 * Type-checks `file` and everything it imports. Never throws for type errors; returns them. When the
 * program's files are byte-identical to those of the last clean check, that result is reused.
 */
export function typecheckFile(file: string, cwd: string = process.cwd()): TypecheckResult {
  const started = performance.now();
  const reused = reusedCleanCheck(file, cwd, started);
  if (reused) return reused;
  const ts = loadTypescript();
  const { options, diagnostics: configDiagnostics, configPath, configFiles } = compilerOptions(ts, file, cwd);
  const stampFile = options.tsBuildInfoFile!.replace(/\.tsbuildinfo$/, '.clean.json');
  const key = JSON.stringify([ts.version, file, options]);
  const cached = configDiagnostics.length === 0 ? unchangedSinceLastClean(stampFile, { key }) : undefined;
  if (cached !== undefined) return { file, errors: [], files: cached, ms: performance.now() - started, cached: true };
  const host = ts.createIncrementalCompilerHost(options);
  const program = ts.createIncrementalProgram({ rootNames: [file], options, host });
  // The fleet's own files are checked; declarations and the pullfleet library (checked by its own CI)
  // are read for their types only, which saves most of the time of a cold check.
  const own = program
    .getSourceFiles()
    .filter(
      (f) => !f.isDeclarationFile && !f.fileName.includes('/node_modules/') && !f.fileName.startsWith(LIBRARY_DIR),
    );
  const diagnostics = [
    ...configDiagnostics,
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...own.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ].filter((d) => d.category === ts.DiagnosticCategory.Error);
  const sources = program.getSourceFiles().map((f) => f.fileName);
  // The cache is an optimisation: when it cannot be written the next check just takes longer.
  try {
    fs.mkdirSync(path.dirname(stampFile), { recursive: true });
    program.emit(); // noEmit: writes only the build-info file
    if (diagnostics.length === 0) {
      const files = [...new Set([...configFiles, ...sources])].map((f): [string, string] => [f, digest(f) ?? '']);
      const probe = probeOf(ts.version, file, configPath, options.tsBuildInfoFile!);
      fs.writeFileSync(stampFile, JSON.stringify({ key, probe, files } satisfies Stamp));
    } else {
      fs.rmSync(stampFile, { force: true });
    }
  } catch {
    // the check itself is complete
  }
  const errors = [...new Set(diagnostics.map((d) => formatDiagnostic(ts, d, cwd)))];
  return { file, errors, files: sources.length, ms: performance.now() - started };
}

/**
 * Type-checks the TypeScript file the app command runs. Returns undefined when the command runs no
 * TypeScript file.
 */
export function typecheckApp(app: string, cwd: string = process.cwd()): TypecheckResult | undefined {
  const file = configFileOf(app, cwd);
  return file ? typecheckFile(file, cwd) : undefined;
}

/** The report of a failed check: every error, then what happens next. */
export function formatTypeErrors(result: TypecheckResult, cwd: string = process.cwd()): string {
  const name = path.relative(cwd, result.file) || result.file;
  return `${result.errors.join('\n')}\n\n${name} does not type-check (${result.errors.length} error(s)); nothing was synthesized or written: fix the errors above and run again\n`;
}

/**
 * For `synth`, `validate` and `plan`: type-checks the fleet description the app command (`--app`, or
 * `app:` of cdk8s.yaml) runs; on errors prints them on stderr, sets exit code 1 and returns false.
 */
export function checkFleetTypes(options: { app?: string; cwd?: string } = {}): boolean {
  const cwd = options.cwd ?? process.cwd();
  let result: TypecheckResult | undefined;
  try {
    const app = options.app ?? readCdk8sConfig(cwd).app;
    result = app ? typecheckApp(app, cwd) : undefined;
  } catch (error) {
    process.stderr.write(`type-check failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return false;
  }
  if (!result || result.errors.length === 0) return true;
  process.stderr.write(formatTypeErrors(result, cwd));
  process.exitCode = 1;
  return false;
}

/** Whether the app command (`--app`, else cdk8s.yaml) runs a TypeScript file, which is type-checked first. */
export function runsTypeScript(app: string | undefined, cwd: string = process.cwd()): boolean {
  try {
    const command = app ?? readCdk8sConfig(cwd).app;
    return command !== undefined && configFileOf(command, cwd) !== undefined;
  } catch {
    return false; // the type-check reports a cdk8s.yaml it cannot read
  }
}
