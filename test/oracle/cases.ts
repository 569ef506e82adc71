/**
 * Fixed cases of the plan oracle: the fixtures of issue 27's items, and shrunk failures pasted from a run
 * (`failureReport` prints them ready to paste). Each runs on every `npm run test:oracle`.
 */
import type { OracleCase, OracleFleet } from '../support/oracle-fleet.js';

const controller = { resourceSummaries: false, workers: 2 };

/** Spokes c1 (ring canary), c2 and c3 in cluster set blue, with or without app web rolled out in waves. */
function wavedFleet(web: boolean, prune = false): OracleFleet {
  return {
    sets: ['blue'],
    spokes: [
      { id: 'c1', ring: 'canary', env: 'prod', set: 'blue' },
      { id: 'c2', ring: 'main', env: 'prod', set: 'blue' },
      { id: 'c3', ring: 'main', env: 'prod', set: 'blue' },
    ],
    placements: [{ name: 'all', sets: ['blue'] }],
    apps: web
      ? [{ name: 'web', spokes: ['c1', 'c2', 'c3'], waved: true, revision: 'v1', ...(prune ? { prune } : {}) }]
      : [],
    appSets: [],
    controller,
  };
}

/** {@link wavedFleet} on an ACM hub whose agent-managed GitOpsCluster selects spokes labelled gitops=agent. */
function agentFleet(agentSpoke: boolean, waved: boolean): OracleFleet {
  const base = wavedFleet(false);
  return {
    ...base,
    acm: true,
    spokes: base.spokes.map((s) => (s.id === 'c3' && agentSpoke ? { ...s, agent: true } : s)),
    apps: [{ name: 'web', spokes: ['c1', 'c2', 'c3'], ...(waved ? { waved } : {}), revision: 'v1' }],
  };
}

export const FIXED_CASES: readonly OracleCase[] = [
  {
    // Issue 27, item 1: plan listed one spoke deletion, the controller made two.
    name: 'issue 27 item 1: a spoke dropped from a waved app (pruneOnDelete)',
    fleet: wavedFleet(true, true),
    edits: [{ op: 'appSpokes', name: 'web', spokes: ['c1', 'c2'] }],
  },
  {
    // Issue 27, item 1: plan said "nothing on a spoke is deleted", the controller deleted every work.
    name: 'issue 27 item 1: a waved app renamed',
    fleet: wavedFleet(true),
    edits: [{ op: 'renameApp', name: 'web', to: 'shop' }],
  },
  {
    // Issue 27, item 2: the hub's Argo CD creates the last wave's hub Applications first; no later wave may
    // get the app before the canary runs it, for a new app as for a new revision.
    name: 'issue 27 item 2: a new waved app whose hub Applications arrive last wave first',
    argoOrder: 'reverse',
    fleet: wavedFleet(false),
    edits: [
      { op: 'addApp', app: { name: 'web', spokes: ['c1', 'c2', 'c3'], waved: true, revision: 'v1' } },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    // Found by seed 14 (10 edits; shrunk by hand): synth rendered a waved app's hub Application for a spoke in
    // no cluster set bound to the Argo CD namespace without a word; the controller refuses to write its work
    // (DeliveryError: "bound sets … do not contain it"), so the new revision never reaches it and the rollout
    // stops at its wave. Synth now foretells it (a warning naming the spoke and the fixes); the oracle holds the
    // controller to the refusal, the spoke to what it ran, and synth to the warning.
    name: 'a spoke of a waved app leaves its cluster set, then the app gets a new revision',
    settleTimeoutMs: 30_000,
    fleet: wavedFleet(true),
    edits: [
      { op: 'spokeSet', id: 'c3' },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    // Found by seed 37 (10 edits; shrunk by hand): a static app removed in step 1 of becoming waved. Its
    // works were rendered with Prune=false, so the hub's Argo CD left them, and with no waved hub Application
    // left the controller never took them over: they stayed on the hub for good, delivering. Synth now renders
    // them once more without Prune=false; the synth after that drops them, and plan lists their deletion.
    name: 'a static app made waved, then removed',
    settleTimeoutMs: 30_000,
    fleet: { ...wavedFleet(false), apps: [{ name: 'web', spokes: ['c1', 'c2', 'c3'], revision: 'v1' }] },
    edits: [{ op: 'appWaves', name: 'web', on: true }, { op: 'removeApp', name: 'web' }, { op: 'synthAgain' }],
  },
  {
    // The same leftover as above, for an app renamed and for a spoke dropped in step 1 of becoming waved.
    name: 'a static app made waved, then renamed and one spoke dropped',
    settleTimeoutMs: 30_000,
    fleet: { ...wavedFleet(false), apps: [{ name: 'web', spokes: ['c1', 'c2', 'c3'], revision: 'v1' }] },
    edits: [
      { op: 'appWaves', name: 'web', on: true },
      { op: 'renameApp', name: 'web', to: 'shop' },
      { op: 'appSpokes', name: 'shop', spokes: ['c1', 'c2'] },
      { op: 'synthAgain' },
    ],
  },
  {
    // Issue 27, item 3: a spoke of a waved app moves basic → agent-managed through its three steps while the
    // app keeps rolling out in waves on the others.
    name: 'issue 27 item 3: a spoke of a waved app moves to agent-managed, then the app gets a new revision',
    fleet: agentFleet(false, true),
    edits: [
      { op: 'moveTo', id: 'c3', model: 'agent-managed' },
      { op: 'moveStep' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c3' },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    name: 'issue 27 item 3: a spoke of a waved app moves back from agent-managed to basic',
    fleet: agentFleet(true, true),
    edits: [
      { op: 'moveTo', id: 'c3', model: 'basic' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c3' },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    // Issue 27, item 4 on an OCM hub: the GitOpsCluster's Placement carries the tolerations OCM's
    // GitOpsCluster controller adds, so an unreachable spoke stays agent-managed and nothing is deleted.
    name: 'issue 27 item 4: an agent-managed spoke of an OCM hub turns unreachable',
    fleet: (() => {
      const { acm: _, ...rest } = agentFleet(true, false);
      return { ...rest, ocmAgents: true };
    })(),
    edits: [
      { op: 'unreachable', id: 'c3', on: true },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    // Issue 27, item 4 on an ACM hub: stolostron's GitOpsCluster controller adds no tolerations, so the
    // unreachable spoke leaves the agent placement; synth refuses the one-step change (nothing is written).
    name: 'issue 27 item 4: an agent-managed spoke of an ACM hub turns unreachable',
    fleet: agentFleet(true, false),
    edits: [
      { op: 'unreachable', id: 'c3', on: true },
      { op: 'appRevision', name: 'web', revision: 'v2' },
    ],
  },
  {
    // Issue 27, item 5: an ApplicationSet on another Placement than the GitOpsCluster's, which selects an
    // agent-managed spoke among basic ones.
    name: 'issue 27 item 5: an ApplicationSet whose placement selects basic and agent-managed spokes',
    fleet: { ...agentFleet(true, false), appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1' }] },
    edits: [
      { op: 'appSetRevision', name: 'podinfo', revision: 'v2' },
      { op: 'moveTo', id: 'c3', model: 'basic' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c3' },
      { op: 'removeAppSet', name: 'podinfo' },
    ],
  },
  {
    // RollingSync (brief h11): an ApplicationSet rolled out in two steps (c1, then c2 and c3) by the played
    // applicationset-controller of Argo CD 3.5.1: a new revision goes step by step (the controller forwards
    // each step's `operation` to the spoke, whose Argo CD syncs only then), the waves are dropped and added
    // again, a spoke leaves the placement, and the ApplicationSet is removed (deletionOrder Reverse: one app
    // at a time, the last step first).
    name: 'RollingSync: a waved ApplicationSet gets new revisions, loses and regains its waves, then goes',
    fleet: { ...wavedFleet(false), appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1', waved: true }] },
    edits: [
      { op: 'appSetRevision', name: 'podinfo', revision: 'v2' },
      { op: 'appSetWaves', name: 'podinfo', on: false },
      { op: 'appSetRevision', name: 'podinfo', revision: 'v3' },
      { op: 'appSetWaves', name: 'podinfo', on: true },
      { op: 'placementEnv', name: 'all', env: 'prod' },
      { op: 'appSetRevision', name: 'podinfo', revision: 'v4' },
      { op: 'removeAppSet', name: 'podinfo' },
    ],
  },
  {
    // RollingSync with pruneOnDelete: a waved ApplicationSet renamed (its apps deleted in reverse step order,
    // the new one's rolled out from step 1) and a spoke moved from the first step to the second.
    name: 'RollingSync: a waved ApplicationSet (pruneOnDelete) renamed, then a canary leaves the first step',
    fleet: {
      ...wavedFleet(false),
      appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1', waved: true, prune: true }],
    },
    edits: [
      { op: 'renameAppSet', name: 'podinfo', to: 'metrics' },
      { op: 'ring', id: 'c2', ring: 'canary' },
      { op: 'appSetRevision', name: 'metrics', revision: 'v2' },
      { op: 'ring', id: 'c1', ring: 'main' },
      { op: 'appSetRevision', name: 'metrics', revision: 'v3' },
    ],
  },
  {
    // Found by seeds 1 and 16 (8 edits; shrunk by hand): an ApplicationSet whose apps ran with automated sync
    // is given RollingSync waves. The hub's applicationset-controller disables automated on its apps (3.3+:
    // `automated.enabled: false`; 2.14-3.2 remove `automated`), the payload then carries `syncPolicy: {}`
    // (src/model/delivery/manifestwork.ts `withoutAutomatedEnabled` drops `automated` and leaves the empty
    // object), and the work agent's server-side apply over the spoke Application that had `automated` turns
    // the emptied object into null, which the Application CRD refuses ("spec.syncPolicy: Invalid value:
    // "null": spec.syncPolicy in body must be of type object", kubernetes/kubernetes #117447, #104694): no
    // work was Applied, the rollout never started. A new ApplicationSet born waved was not hit (a create keeps
    // {}). The payload now leaves an empty syncPolicy out.
    name: 'RollingSync: an ApplicationSet becomes waved after its apps ran',
    settleTimeoutMs: 20_000,
    fleet: { ...wavedFleet(false), appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1' }] },
    edits: [{ op: 'appSetWaves', name: 'podinfo', on: true }],
  },
  {
    // Agent-autonomous (brief h11): a spoke of a static app (pruneOnDelete) and an ApplicationSet moves basic →
    // agent-autonomous (its works stand by, then go, and its own Argo CD syncs its folder, adopting the
    // Applications), gets a new revision there, and moves back (the folder stops listing them, prunes nothing;
    // the works take them over).
    name: 'agent-autonomous: a spoke moves basic → agent-autonomous and back',
    fleet: {
      ...wavedFleet(false),
      autonomous: true,
      apps: [{ name: 'web', spokes: ['c1', 'c2', 'c3'], revision: 'v1', prune: true }],
      appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1' }],
    },
    edits: [
      { op: 'moveTo', id: 'c3', model: 'agent-autonomous' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c3' },
      { op: 'appRevision', name: 'web', revision: 'v2' },
      { op: 'moveTo', id: 'c3', model: 'basic' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c3' },
      { op: 'appRevision', name: 'web', revision: 'v3' },
    ],
  },
  {
    // Agent-autonomous with a waved app: the canary of a waved app moves to agent-autonomous (it leaves the
    // waves while it moves and runs it), the app is removed while it runs there, and the spoke leaves the fleet.
    name: 'agent-autonomous: the canary of a waved app moves there, then the app goes',
    fleet: { ...wavedFleet(true, true), autonomous: true },
    edits: [
      { op: 'moveTo', id: 'c1', model: 'agent-autonomous' },
      { op: 'moveStep' },
      { op: 'finishMove', id: 'c1' },
      { op: 'appRevision', name: 'web', revision: 'v2' },
      { op: 'removeApp', name: 'web' },
      { op: 'removeSpoke', id: 'c1' },
    ],
  },
];
