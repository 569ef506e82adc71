/**
 * Leader election on a coordination.k8s.io/v1 Lease, so two replicas never reconcile at once. A candidate
 * takes the Lease when it is free or expired; the leader renews it every retry period and steps down
 * (callback) when it cannot renew within the renew deadline. All writes use resourceVersion, so two
 * candidates racing for the Lease get one 409 and one win.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../model/index.js';
import { sleep } from './informer.js';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';
import { LEASE } from './resources.js';

export interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly abort = new AbortController();
  private leading = false;
  private lastRenew = 0;
  private running?: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  /** Runs until stopped: `onStarted` once leading, `onStopped` when leadership is lost. */
  start(onStarted: () => void, onStopped: () => void): void {
    this.running ??= this.loop(onStarted, onStopped);
  }

  private async loop(onStarted: () => void, onStopped: () => void): Promise<void> {
    const { retryPeriodSeconds, renewDeadlineSeconds } = this.options;
    while (!this.abort.signal.aborted) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (error) {
        this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'leader election: lease update failed');
      }
      if (this.abort.signal.aborted) break;
      if (ok) {
        this.lastRenew = Date.now();
        if (!this.leading) {
          this.leading = true;
          this.logger.info({ identity: this.options.identity }, 'became leader');
          onStarted();
        }
      } else if (this.leading && Date.now() - this.lastRenew > renewDeadlineSeconds * 1000) {
        this.leading = false;
        this.logger.error({ identity: this.options.identity }, 'lost leadership: could not renew the lease in time');
        onStopped();
      }
      const jitter = this.leading ? 1 : 1 + Math.random() * 0.2;
      await sleep(retryPeriodSeconds * 1000 * jitter, this.abort.signal);
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationSeconds } = this.options;
    const now = this.now();
    let lease: LeaseObject;
    try {
      lease = await this.client.get<LeaseObject>(LEASE, namespace, name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await this.client.create<LeaseObject>(LEASE, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        });
        return true;
      } catch (createError) {
        if (isConflict(createError)) return false;
        throw createError;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity;
    const renewed = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const expired = !holder || now.getTime() - renewed > (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder !== identity && !expired) return false;
    const takeover = holder !== identity;
    const next: LeaseObject = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: microTime(now),
        ...(takeover ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
      },
    };
    try {
      await this.client.replace(LEASE, next);
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** Stops campaigning and, when leading, releases the Lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.client.get<LeaseObject>(LEASE, this.options.namespace, this.options.name);
      if (lease.spec?.holderIdentity === this.options.identity) {
        await this.client.replace(LEASE, { ...lease, spec: { ...lease.spec, holderIdentity: undefined, renewTime: undefined, acquireTime: undefined } });
      }
    } catch (error) {
      this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not release the lease');
    }
  }
}
