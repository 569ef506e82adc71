/**
 * One clear message per mistake: an empty construct id is reported (not a bare error from the
 * constructs library) and nothing else fails because of it; one app's bad value never hides another
 * app's problem, nor is it reported again under every spoke.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';

const git = AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'app' });

function problemsOf(fleet: Fleet): string[] {
  return fleet.problems().map((p) => `[${p.path}] ${p.message}`);
}

describe('clear messages', () => {
  test('GIVEN an empty id on every kind of construct WHEN synthesized THEN each is one problem naming the kind and an example, and nothing else fails', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, '', { argoNamespace: 'argocd' });
    const set = new ClusterSet(hub, '');
    const placement = new Placement(hub, '', { clusterSets: [set] });
    const spoke = new Spoke(hub, '', { clusterSet: set });
    new PullApplication(hub, '', { source: git, destinationNamespace: 'app', spokes: [spoke] });
    new PullApplicationSet(hub, '', { source: git, destinationNamespace: 'app', placement });
    expect(problemsOf(fleet)).toStrictEqual([
      "[Hub] a Hub was given an empty id: the id is its name (a DNS label), for example new Hub(fleet, 'hub')",
      "[unnamed-hub-1] a ClusterSet was given an empty id: the id is its name (a DNS label), for example new ClusterSet(hub, 'prod', …)",
      "[unnamed-hub-1] a Placement was given an empty id: the id is its name (a DNS label), for example new Placement(hub, 'all-prod', …)",
      "[unnamed-hub-1] a Spoke was given an empty id: the id is its name (a DNS label), for example new Spoke(hub, 'prod-east', …)",
      "[unnamed-hub-1] a PullApplication was given an empty id: the id is its name (a DNS label), for example new PullApplication(hub, 'guestbook', …)",
      "[unnamed-hub-1] a PullApplicationSet was given an empty id: the id is its name (a DNS label), for example new PullApplicationSet(hub, 'guestbook', …)",
    ]);
  });

  test('GIVEN an empty GitOpsCluster id WHEN synthesized THEN it is one problem', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM });
    const placement = new Placement(hub, 'agents', { namespace: 'openshift-gitops' });
    GitOpsCluster.acm(hub, '', { placement });
    expect(problemsOf(fleet)).toStrictEqual([
      "[hub] a GitOpsCluster was given an empty id: the id is its name (a DNS label), for example GitOpsCluster.ocm(hub, 'agents', …)",
    ]);
  });

  test('GIVEN one app with an empty destinationNamespace and another with an empty chart targetRevision WHEN synthesized THEN both are reported, once each, and no spoke reports a nameless Namespace', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd' });
    const prod = new ClusterSet(hub, 'prod');
    const east = new Spoke(hub, 'east', { clusterSet: prod });
    new PullApplication(hub, 'a', { source: git, destinationNamespace: '', spokes: [east] });
    new PullApplication(hub, 'b', {
      source: AppSource.helm({ repoURL: 'https://charts.example', chart: 'c', targetRevision: '' }),
      destinationNamespace: 'b',
      spokes: [east],
    });
    const problems = problemsOf(fleet);
    expect(problems).toContain(
      '[hub/PullApplication:a] destinationNamespace "" must not be empty: use lower-case letters, digits and "-" (at most 63 characters)',
    );
    expect(
      problems.filter(
        (p) => p.startsWith('[hub/PullApplication:b] ') && p.includes('targetRevision of chart "c" is empty'),
      ),
    ).toHaveLength(1);
    expect(problems.filter((p) => p.startsWith('[hub/east]'))).toStrictEqual([]);
    expect(problems).toHaveLength(2);
  });
});
