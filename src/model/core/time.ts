/**
 * Kubernetes timestamps, written the way the API server writes them. Pure: no I/O, no clock (callers
 * pass the instant, so tests and reconcilers control time).
 */

/**
 * `date` as a Kubernetes `metav1.Time`: RFC 3339 in UTC with second precision, `2006-01-02T15:04:05Z`.
 *
 * @remarks
 * This is the form `metav1.Time` marshals to and the API server stores (conditions' `lastTransitionTime`,
 * `creationTimestamp`, annotations pullfleet stamps). Milliseconds are truncated, not rounded, as Go's
 * `time.Format` truncates: `12:00:00.999` becomes `12:00:00Z`, never `12:00:01Z`.
 *
 * @throws RangeError when `date` is an invalid Date (as `Date.prototype.toISOString` does).
 */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * `date` as a Kubernetes `metav1.MicroTime`: RFC 3339 in UTC with six fractional digits,
 * `2006-01-02T15:04:05.000000Z` (the form of a Lease's `acquireTime` and `renewTime`).
 *
 * @remarks
 * A JavaScript Date holds milliseconds, so the last three digits are always `000`.
 *
 * @throws RangeError when `date` is an invalid Date.
 */
export function kubeMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
