/**
 * A list-then-watch stream of one collection on a real API server, for tests that need every version of
 * an object in the order the server stored them: the initial list is delivered as ADDED events, then every
 * watch event, and a watch the server ends (its timeout) is reopened from the last resourceVersion seen, so
 * nothing is lost or repeated. A watch that fails (410 Gone, the server gone) stops the stream and is
 * reported by `error()`: the history would have a hole, and a test must not judge a history with holes.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { RawClient } from './raw-client.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchedObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface ObjectStream {
  /** Stops the stream (idempotent). */
  stop(): void;
  /** Why the stream stopped on its own, if it did. */
  error(): unknown;
}

/**
 * Lists `path` (a collection URL path, e.g. `/apis/argoproj.io/v1alpha1/namespaces/x/applications`) and
 * watches it from the list's resourceVersion; `onEvent` is called once per event, in server order, and is
 * never called concurrently with itself.
 */
export async function streamObjects<T extends WatchedObject>(
  kubeConfig: KubeConfig,
  path: string,
  query: Record<string, string>,
  onEvent: (type: WatchEventType, object: T) => void,
): Promise<ObjectStream> {
  const client = new RawClient(kubeConfig);
  const list = await client.request<{ items: T[]; metadata: { resourceVersion: string } }>('GET', path, {
    query,
    timeoutMs: 30_000,
  });
  let lastVersion = list.metadata.resourceVersion;
  for (const item of list.items) onEvent('ADDED', item);
  let stopped = false;
  let failure: unknown;
  let abort: AbortController | undefined;

  const open = async (): Promise<void> => {
    if (stopped) return;
    try {
      abort = await new Watch(kubeConfig).watch(
        path,
        { ...query, resourceVersion: lastVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' },
        (type: string, object: T & { code?: number }) => {
          if (stopped) return;
          if (type === 'BOOKMARK') {
            lastVersion = object.metadata.resourceVersion ?? lastVersion;
            return;
          }
          if (type === 'ERROR') {
            failure = new Error(`watch of ${path} failed: ${JSON.stringify(object)}`);
            stopped = true;
            abort?.abort();
            return;
          }
          lastVersion = object.metadata.resourceVersion ?? lastVersion;
          onEvent(type as WatchEventType, object);
        },
        (error: unknown) => {
          if (stopped) return;
          const aborted = (error as { name?: string } | undefined)?.name === 'AbortError';
          if (error && !aborted) {
            failure = error;
            stopped = true;
            return;
          }
          // The server ended the watch (its timeout): continue from where it stood.
          void open();
        },
      );
    } catch (error) {
      failure = error;
      stopped = true;
    }
  };
  await open();
  return {
    stop() {
      stopped = true;
      abort?.abort();
    },
    error: () => failure,
  };
}
