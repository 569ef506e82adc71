/**
 * The layer rules of src/ (see ARCHITECTURE.md), checked in CI by `npm run lint:deps`:
 *
 *   model ◀── validate, migrate, kube ◀── controller
 *     ▲            ▲                        (cli may use kube, never controller)
 *     └── constructs ◀── cli   (cli: only the names in constructs/synth-env.ts)
 *
 * - src/model is pure: it imports nothing outside src/model but `yaml` and node:crypto.
 * - only src/kube and src/controller import @kubernetes/client-node.
 * - only src/constructs imports cdk8s, cdk8s-plus-28 and constructs (and the generated imports/).
 * - no import cycles anywhere in src/.
 * - nothing in src/ imports the package entry, src/index.ts.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle hides which module depends on which; split the shared part into a module of its own.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'model-is-pure',
      severity: 'error',
      comment: 'src/model is shared by synth and the controller: it imports only src/model, yaml and node:crypto.',
      from: { path: '^src/model/' },
      to: { pathNot: ['^src/model/', '^node_modules/yaml/', '^crypto$', '^node:crypto$'] },
    },
    {
      name: 'client-node-in-kube-and-controller-only',
      severity: 'error',
      comment:
        'Talk to the API through src/kube (client, informer, cache); nothing else imports @kubernetes/client-node.',
      from: { path: '^src/', pathNot: ['^src/kube/', '^src/controller/'] },
      to: { path: '^node_modules/@kubernetes/client-node/' },
    },
    {
      name: 'cdk8s-in-constructs-only',
      severity: 'error',
      comment: 'Only src/constructs builds cdk8s objects.',
      from: { path: '^src/', pathNot: ['^src/constructs/'] },
      to: { path: ['^node_modules/(cdk8s|cdk8s-plus-28|constructs)/', '^imports/'] },
    },
    {
      name: 'kube-uses-model-only',
      severity: 'error',
      comment:
        'src/kube is the API access layer: it may use the model, never the controller, the CLI or the constructs.',
      from: { path: '^src/kube/' },
      to: { path: '^src/(controller|cli|constructs|validate|migrate)/' },
    },
    {
      name: 'validate-and-migrate-use-model-only',
      severity: 'error',
      comment: 'src/validate and src/migrate use the model, and neither uses the other.',
      from: { path: '^src/(validate|migrate)/' },
      to: { path: '^src/(controller|cli|constructs|kube|validate|migrate)/', pathNot: '^src/$1/' },
    },
    {
      name: 'controller-not-from-cli-or-constructs',
      severity: 'error',
      comment:
        'The controller runs on the hub; the CLI and the constructs reach the API through src/kube and the model.',
      from: { path: '^src/(cli|constructs)/' },
      to: { path: '^src/controller/' },
    },
    {
      name: 'controller-not-into-cli-or-constructs',
      severity: 'error',
      from: { path: '^src/controller/' },
      to: { path: '^src/(cli|constructs|validate|migrate)/' },
    },
    {
      name: 'constructs-not-into-cli',
      severity: 'error',
      from: { path: '^src/constructs/' },
      to: { path: '^src/(cli|kube|migrate)/' },
    },
    {
      name: 'cli-runs-fleet-programs-apart',
      severity: 'error',
      comment:
        'The CLI runs the fleet program in a process of its own: it reads only the names of the variables they share (src/constructs/synth-env.ts), so a command never loads the construct library.',
      from: { path: '^src/cli/' },
      to: { path: '^src/constructs/', pathNot: '^src/constructs/synth-env\\.ts$' },
    },
    {
      name: 'package-entry-from-outside-only',
      severity: 'error',
      comment:
        'src/index.ts is the package entry and re-exports the constructs: importing it from inside src/ would get round the rules above.',
      from: { path: '^src/' },
      to: { path: '^src/index\\.ts$' },
    },
    {
      name: 'constructs-internals-stay-inside',
      severity: 'error',
      comment: 'Files named _*.ts are internals of src/constructs.',
      from: { path: '^src/', pathNot: '^src/constructs/' },
      to: { path: '^src/constructs/_' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
