/**
 * PENDING_CONTROLLER_FIXES: the chaos scenarios that fail against today's controller because of a
 * defect issue 7 names. On the double they run as `test.failing` (reported as passing while they fail,
 * and as failing the moment they pass), so the suite stays green and shows when a fix lands: then delete
 * the entry and the scenario runs normally, under every seed too.
 */
/** Scenario name → the issue 7 defect it waits for. */
export const PENDING_CONTROLLER_FIXES: Record<string, string> = {
  "two replicas, the leader's requests hang: the standby takes over only once the Lease has really expired, and the old leader's stuck writes never land":
    'issue 7 defects 5 and 7 (no request timeout: the hung leader keeps its writes in flight and they land after the partition heals)',
  'opted-in apps with an empty, blank or missing cluster annotation, or without skip-reconcile, get a condition saying so': 'issue 7 defect 10 (bad annotations get no condition)',
  'feedback the hub app schema rejects (an Integer operationStateStartedAt) does not freeze the status write-back: valid fields land and a condition names the field':
    'issue 7 defect 10 (one rejected feedback value freezes the write-back)',
  '429 with Retry-After: the controller waits at least as long as the API server asked before it retries the write': 'issue 7 defect 7 (Retry-After is not honoured: the retry follows the queue backoff)',
  'watches that end at once without an event count as failures: the controller backs off instead of spinning, and recovers':
    'issue 7 defect 7 (a watch that ends without events is a success: the informer reopens it at once, thousands of requests per second)',
  'a cluster whose namespace does not exist yet: a condition on the hub app, and the work follows promptly once the namespace appears': 'issue 7 defect 10 (namespace 404 loops without a condition)',
};
