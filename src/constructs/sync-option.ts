/**
 * Argo CD sync options (`spec.syncPolicy.syncOptions`) as values instead of strings. The strings are
 * Argo CD's own (argo-cd `gitops-engine/pkg/sync/common/types.go` and `controller/sync.go`, cited on
 * docs/reference/upstream-contract.md); every option here is known to each Argo CD release pullfleet
 * supports (2.14 to 3.5).
 */
import { enumMember, type EnumValue } from '../model/core/types.js';

/** How Argo CD deletes the resources a sync prunes (`PrunePropagationPolicy=<policy>`). */
export enum PrunePropagationPolicy {
  /** The owner waits until its dependents are deleted (Argo CD's default). */
  FOREGROUND = 'foreground',
  /** The owner goes at once; the garbage collector deletes its dependents afterwards. */
  BACKGROUND = 'background',
  /** Only the owner goes; its dependents stay, without an owner. */
  ORPHAN = 'orphan',
}

const MARKER = Symbol.for('pullfleet.SyncOption');

/** `Key=Value`: a key of letters and digits, `=`, and a value without white space or commas. */
const OPTION_FORMAT = /^[A-Za-z][A-Za-z0-9]*=[^\s,]+$/;

/**
 * One Argo CD sync option of an app (`PullAppOptions.syncOptions`): a member such as
 * `SyncOption.SERVER_SIDE_APPLY`, `SyncOption.prunePropagationPolicy(...)`, or `SyncOption.custom(...)` for an
 * option pullfleet has no member for.
 */
export class SyncOption {
  /** `ServerSideApply=true`: apply with server-side apply instead of `kubectl apply`. */
  public static readonly SERVER_SIDE_APPLY = new SyncOption('ServerSideApply=true');
  /** `CreateNamespace=true`: create the destination namespace when it is missing (see `managedNamespaceMetadata`). */
  public static readonly CREATE_NAMESPACE = new SyncOption('CreateNamespace=true');
  /** `PruneLast=true`: prune after every other resource of the sync is applied and healthy. */
  public static readonly PRUNE_LAST = new SyncOption('PruneLast=true');
  /** `ApplyOutOfSyncOnly=true`: apply only the resources that are out of sync. */
  public static readonly APPLY_OUT_OF_SYNC_ONLY = new SyncOption('ApplyOutOfSyncOnly=true');
  /** `RespectIgnoreDifferences=true`: a sync leaves the fields of `ignoreDifferences` as they are on the cluster. */
  public static readonly RESPECT_IGNORE_DIFFERENCES = new SyncOption('RespectIgnoreDifferences=true');
  /** `Replace=true`: `kubectl replace` (or create) instead of apply. */
  public static readonly REPLACE = new SyncOption('Replace=true');
  /** `FailOnSharedResource=true`: fail the sync when a resource is already managed by another Application. */
  public static readonly FAIL_ON_SHARED_RESOURCE = new SyncOption('FailOnSharedResource=true');
  /** `SkipDryRunOnMissingResource=true`: skip the dry run of resources whose type the cluster does not know yet. */
  public static readonly SKIP_DRY_RUN_ON_MISSING_RESOURCE = new SyncOption('SkipDryRunOnMissingResource=true');
  /** `Validate=false`: apply without `kubectl` schema validation. */
  public static readonly VALIDATE_FALSE = new SyncOption('Validate=false');

  /** `PrunePropagationPolicy=<policy>`: how pruned resources are deleted. */
  public static prunePropagationPolicy(policy: EnumValue<PrunePropagationPolicy>): SyncOption {
    const allowed = Object.values(PrunePropagationPolicy) as string[];
    if (!allowed.includes(policy)) {
      return new SyncOption(`PrunePropagationPolicy=${String(policy)}`, [
        `SyncOption.prunePropagationPolicy: ${JSON.stringify(policy)} is not a propagation policy: use PrunePropagationPolicy.FOREGROUND, BACKGROUND or ORPHAN`,
      ]);
    }
    return new SyncOption(`PrunePropagationPolicy=${enumMember(policy)}`);
  }

  /**
   * Any other option, written as Argo CD reads it (`Key=Value`, for example `'ClientSideApplyMigration=false'`).
   * Its key must still be an option Argo CD knows: synth validation checks every option against the list of
   * docs/cli/validate.md.
   */
  public static custom(option: string): SyncOption {
    if (typeof option !== 'string' || !OPTION_FORMAT.test(option)) {
      return new SyncOption(String(option), [
        `SyncOption.custom(${JSON.stringify(option)}): a sync option is written "Key=Value" (a key of letters and digits, "=", a value without spaces or commas), for example 'ServerSideApply=true'`,
      ]);
    }
    return new SyncOption(option);
  }

  /**
   * True for a SyncOption made by this library (also by another copy of it), recognised by its marker.
   * @internal
   */
  public static _isSyncOption(value: unknown): value is SyncOption {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** The option as Argo CD reads it, for example `ServerSideApply=true`. */
  public readonly value: string;

  private readonly problems: readonly string[];

  private constructor(value: string, problems: readonly string[] = []) {
    this.value = value;
    this.problems = problems;
    Object.defineProperty(this, MARKER, { value: true });
  }

  /**
   * What is wrong with this option, for the app using it to report.
   * @internal
   */
  public _problems(): string[] {
    return [...this.problems];
  }

  /** The option as Argo CD reads it (the same as {@link SyncOption.value}). */
  public toString(): string {
    return this.value;
  }
}
