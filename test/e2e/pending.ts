/**
 * PENDING_CONTROLLER_FIXES: the chaos scenarios that fail against today's controller because of a
 * known defect. On the double they run as `test.failing` (reported as passing while they fail,
 * and as failing the moment they pass), so the suite stays green and shows when a fix lands: then delete
 * the entry and the scenario runs normally, under every seed too.
 */
/** Scenario name → the controller defect it waits for. */
export const PENDING_CONTROLLER_FIXES: Record<string, string> = {};
