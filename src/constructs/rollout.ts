import { Duration } from 'cdk8s';
import { dnsLabelProblem } from '../model/core/names.js';
import { SelectorOperator, type SelectorRequirement } from '../model/core/selectors.js';
import { enumMember, type EnumValue } from '../model/core/types.js';
import {
  assignWaves,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  type RolloutWave as ResolvedWave,
  type FailureAction,
  type WaveDeclaration,
  type WaveLimit as ModelWaveLimit,
} from '../model/rollout/policy.js';
import type { ISpoke } from './interfaces.js';
import { checkValue, enumOf, listOf, spokeRef } from './_props-check.js';

/** How many clusters of a wave may update at once. */
export class WaveLimit {
  /** At most `clusters` clusters of the wave at once (a whole number, 1 or more). */
  public static count(clusters: number): WaveLimit {
    return new WaveLimit({ count: clusters });
  }

  /**
   * At most `percent` % of the wave's clusters at once, rounded down but never below one cluster (as
   * Argo CD scales `maxUpdate`). A number from 1 to 100.
   */
  public static percent(percent: number): WaveLimit {
    return new WaveLimit({ percent });
  }

  private constructor(private readonly limit: ModelWaveLimit) {}

  /** @internal */
  public _limit(): ModelWaveLimit {
    return { ...this.limit };
  }

  /** How the limit reads in messages, plan and status: `2 clusters` or `25%`. */
  public toString(): string {
    return 'count' in this.limit ? `${this.limit.count} clusters` : `${this.limit.percent}%`;
  }
}

/** What happens to the clusters that failed when a rollout of a static app halts. */
export enum RolloutFailureAction {
  /** They keep what they got; every other cluster keeps the revision it has. */
  PAUSE = 'pause',
  /** They get back the payload they ran before the rollout (a cluster that had none keeps the new one). */
  ROLLBACK = 'rollback',
}

/** The order in which an ApplicationSet with RollingSync deletes its Applications (Argo CD 3.2 or later). */
export enum DeletionOrder {
  /** Every Application at once (Argo CD's default). */
  ALL_AT_ONCE = 'AllAtOnce',
  /** The last wave first, the first wave last. */
  REVERSE = 'Reverse',
}

/** One wave of a {@link Rollout}: which spokes, how many at once, how long to wait after it. */
export interface RolloutWaveProps {
  /**
   * The wave's name, shown by plan and status.
   * @default - `wave-<n>`, n counting from 1
   */
  readonly name?: string;
  /**
   * Spokes whose labels include all of these.
   * @default - no label condition
   */
  readonly labels?: Record<string, string>;
  /**
   * Label expressions over the spokes' labels; all must hold. ApplicationSets use them at synth only
   * (the steps they render list cluster names).
   * @default []
   */
  readonly labelExpressions?: readonly SelectorRequirement[];
  /**
   * Spokes named one by one (added to those the labels select).
   * @default []
   */
  readonly spokes?: readonly ISpoke[];
  /**
   * This wave takes every targeted spoke no other wave selects (give no labels, expressions or spokes).
   * In an ApplicationSet it also takes clusters the placement selects at runtime that the fleet does not
   * declare.
   * @default false
   */
  readonly rest?: boolean;
  /**
   * At most this many clusters of the wave update at once.
   * @default - every cluster of the wave at once
   */
  readonly maxInFlight?: WaveLimit;
  /**
   * Static apps: how long to wait after every cluster of the wave is healthy before the next wave starts.
   * ApplicationSets have no soak time (Argo CD's RollingSync moves on at once).
   * @default - no wait
   */
  readonly soak?: Duration;
}

/** Failure handling of a {@link Rollout}. */
export interface RolloutOptions {
  /**
   * Static apps: failed clusters tolerated in one rollout; one more halts it. ApplicationSets halt on
   * the first Application that does not become healthy (RollingSync has no tolerance), so only 0 is
   * accepted there.
   * @default 0
   */
  readonly maxFailures?: number;
  /**
   * Static apps: a cluster that has not become Healthy and Synced at the new revision this long after it
   * was given it counts as failed.
   * @default Duration.minutes(10)
   */
  readonly progressDeadline?: Duration;
  /**
   * Static apps: what failed clusters get when the rollout halts.
   * @default RolloutFailureAction.PAUSE
   */
  readonly onFailure?: EnumValue<RolloutFailureAction>;
  /**
   * ApplicationSets: the order in which Applications are deleted when the ApplicationSet goes
   * (`strategy.deletionOrder`, Argo CD 3.2 or later).
   * @default - not rendered (Argo CD deletes all at once)
   */
  readonly deletionOrder?: EnumValue<DeletionOrder>;
}

/** A wave as a {@link Rollout} keeps it (resolved name, limits). */
export interface RolloutWave {
  /** The wave's name. */
  readonly name: string;
  /** Labels the wave's spokes carry (all of them). */
  readonly labels: Readonly<Record<string, string>>;
  /** Label expressions the wave's spokes satisfy (all of them). */
  readonly labelExpressions: readonly SelectorRequirement[];
  /** Spokes named one by one. */
  readonly spokes: readonly ISpoke[];
  /** Whether the wave takes the spokes no other wave selects. */
  readonly rest: boolean;
  /**
   * The in-flight limit.
   * @default - every cluster of the wave at once
   */
  readonly maxInFlight?: WaveLimit;
  /**
   * The soak time.
   * @default - no wait
   */
  readonly soak?: Duration;
}

/**
 * How a change of an app reaches its spokes: ordered waves of spokes, each with an in-flight limit and a
 * soak time, and what happens when clusters fail. Give it to a PullApplication or PullApplicationSet as
 * `rollout`. ApplicationSets render Argo CD's RollingSync; static apps are rolled out by the hub
 * controller (docs/concepts/rollouts.md).
 */
export class Rollout {
  /** Ordered waves: the first wave gets a change first; wave n+1 starts once wave n is done. */
  public static waves(waves: readonly RolloutWaveProps[], options: RolloutOptions = {}): Rollout {
    return new Rollout(waves, options);
  }

  /** The waves, in order. */
  public readonly waves: readonly RolloutWave[];
  /** Failed clusters tolerated in one rollout. */
  public readonly maxFailures: number;
  /**
   * How long a cluster of a static app's rollout may take to converge: the value given, else 10 minutes. (A
   * PullApplicationSet's rollout takes none: Argo CD's RollingSync has no deadline, and giving one is a problem.)
   */
  public readonly progressDeadline: Duration;
  /** What failed clusters get when the rollout halts. */
  public readonly onFailure: RolloutFailureAction;
  /** The ApplicationSet deletion order, if any. */
  public readonly deletionOrder?: DeletionOrder;

  /** Wave spokes that are not spokes (undefined, a name...), each with the fix; they are left out of `waves`. */
  private readonly spokeProblems: string[] = [];
  /** The waves (index) whose `spokes` held something that is not a spoke. */
  private readonly wavesWithBadSpokes = new Set<number>();
  /** Whether `progressDeadline` was given (a PullApplicationSet's rollout must not give one). */
  private readonly progressDeadlineGiven: boolean;

  private constructor(waves: readonly RolloutWaveProps[], options: RolloutOptions) {
    this.waves = (Array.isArray(waves) ? waves : []).map((wave, i) => ({
      name: wave?.name ?? `wave-${i + 1}`,
      labels: { ...(wave?.labels ?? {}) },
      labelExpressions: [...(wave?.labelExpressions ?? [])],
      spokes: this.checkedSpokes(i, wave?.spokes, `rollout wave ${i + 1} ("${wave?.name ?? `wave-${i + 1}`}") spokes`),
      rest: wave?.rest === true,
      ...(wave?.maxInFlight ? { maxInFlight: wave.maxInFlight } : {}),
      ...(wave?.soak ? { soak: wave.soak } : {}),
    }));
    this.maxFailures = options.maxFailures ?? 0;
    this.progressDeadlineGiven = Boolean(options.progressDeadline);
    this.progressDeadline = options.progressDeadline || Duration.seconds(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    this.onFailure = enumMember(options.onFailure ?? RolloutFailureAction.PAUSE);
    if (options.deletionOrder) this.deletionOrder = enumMember(options.deletionOrder);
  }

  /** The spokes of a wave that are spokes; every other item is a problem naming its place (`at[i]`) and the fix. */
  private checkedSpokes(wave: number, spokes: unknown, at: string): ISpoke[] {
    if (spokes === undefined) return [];
    const { value, errors } = checkValue(listOf(spokeRef<ISpoke>(), '[canaryA, canaryB]'), spokes, at);
    this.spokeProblems.push(...errors);
    if (errors.length > 0) this.wavesWithBadSpokes.add(wave);
    return value ?? [];
  }

  /**
   * Every problem with the rollout's own values (names, limits, durations), each naming the value and the
   * fix; `dynamic`: for a PullApplicationSet (RollingSync), which has neither soak times nor failure tolerance.
   * @internal
   */
  public _problems(dynamic: boolean): string[] {
    const problems: string[] = [...this.spokeProblems];
    problems.push(
      ...checkValue(enumOf(RolloutFailureAction, 'RolloutFailureAction'), this.onFailure, 'rollout onFailure').errors,
    );
    if (this.deletionOrder !== undefined)
      problems.push(
        ...checkValue(enumOf(DeletionOrder, 'DeletionOrder'), this.deletionOrder, 'rollout deletionOrder').errors,
      );
    if (this.waves.length === 0) problems.push('rollout has no waves: give Rollout.waves([...]) at least one wave');
    this.waves.forEach((wave, i) => {
      const where = `rollout wave ${i + 1} ("${wave.name}")`;
      if (dnsLabelProblem(wave.name) !== undefined)
        problems.push(`${where}: name "${wave.name}" must be a DNS label (lower case letters, digits, '-')`);
      const selects = Object.keys(wave.labels).length > 0 || wave.labelExpressions.length > 0 || wave.spokes.length > 0;
      if (wave.rest && selects)
        problems.push(
          `${where}: a wave that takes the rest selects nothing itself: drop its labels, expressions and spokes`,
        );
      // A wave whose spokes were all wrong has its problems already.
      if (!wave.rest && !selects && !this.wavesWithBadSpokes.has(i))
        problems.push(`${where}: selects no spoke: give labels, labelExpressions or spokes, or rest: true`);
      const limit = wave.maxInFlight?._limit();
      if (limit && 'count' in limit && !(Number.isInteger(limit.count) && limit.count >= 1))
        problems.push(`${where}: maxInFlight WaveLimit.count(${limit.count}) must be a whole number of 1 or more`);
      if (
        limit &&
        'percent' in limit &&
        !(Number.isInteger(limit.percent) && limit.percent >= 1 && limit.percent <= 100)
      )
        problems.push(`${where}: maxInFlight WaveLimit.percent(${limit.percent}) must be a whole number from 1 to 100`);
      for (const expression of wave.labelExpressions) {
        if (!(Object.values(SelectorOperator) as string[]).includes(expression?.operator))
          problems.push(
            `${where}: label expression operator ${JSON.stringify(expression?.operator)} is not one of ${Object.values(SelectorOperator).join(', ')}`,
          );
      }
      if (dynamic && wave.soak && wave.soak.toSeconds({ integral: false }) > 0)
        problems.push(
          `${where}: soak ${wave.soak.toHumanString()} is not possible for a PullApplicationSet: Argo CD's RollingSync starts the next step as soon as one is healthy; drop soak, or deliver the app statically (PullApplication) where pullfleet's controller keeps soak times`,
        );
    });
    if (!(Number.isInteger(this.maxFailures) && this.maxFailures >= 0))
      problems.push(`rollout maxFailures ${this.maxFailures} must be a whole number of 0 or more`);
    else if (dynamic && this.maxFailures > 0)
      problems.push(
        `rollout maxFailures ${this.maxFailures} is not possible for a PullApplicationSet: Argo CD's RollingSync stops at the first Application that does not become healthy; use 0, or deliver the app statically (PullApplication)`,
      );
    if (this.progressDeadline.toSeconds({ integral: false }) < 1)
      problems.push(`rollout progressDeadline ${this.progressDeadline.toHumanString()} must be at least one second`);
    if (dynamic && this.progressDeadlineGiven)
      problems.push(
        'rollout progressDeadline is not possible for a PullApplicationSet: RollingSync waits for each step without a deadline; drop it, or deliver the app statically (PullApplication)',
      );
    if (dynamic && this.onFailure === RolloutFailureAction.ROLLBACK)
      problems.push(
        'rollout onFailure ROLLBACK is not possible for a PullApplicationSet: RollingSync never rolls back; use PAUSE, or deliver the app statically (PullApplication)',
      );
    if (!dynamic && this.deletionOrder)
      problems.push('rollout deletionOrder applies to PullApplicationSets only: drop it from this PullApplication');
    return problems;
  }

  /**
   * The waves resolved against `spokes` (name and labels), or every problem: the rollout's own values first
   * (then nothing is assigned, so one mistake is reported once), then the assignment's. @internal
   */
  public _resolve(
    spokes: ReadonlyArray<Pick<ISpoke, 'name' | 'labels'>>,
    dynamic: boolean,
    more: readonly string[] = [],
  ): { waves?: readonly ResolvedWave[]; problems: readonly string[] } {
    const problems = [...this._problems(dynamic), ...more];
    if (problems.length > 0) return { problems };
    const assignment = assignWaves(
      this._declarations(),
      spokes.map((spoke) => ({ name: spoke.name, labels: spoke.labels })),
      'rollout',
    );
    return assignment.problems.length > 0
      ? { problems: assignment.problems }
      : { waves: assignment.waves, problems: [] };
  }

  /** The waves as the model resolves them. @internal */
  public _declarations(): WaveDeclaration[] {
    return this.waves.map((wave) => ({
      name: wave.name,
      ...(Object.keys(wave.labels).length || wave.labelExpressions.length
        ? {
            selector: {
              matchLabels: { ...wave.labels },
              matchExpressions: wave.labelExpressions.map((e) => ({ ...e, values: [...(e.values ?? [])] })),
            },
          }
        : {}),
      ...(wave.spokes.length ? { spokes: wave.spokes.map((spoke) => spoke.name) } : {}),
      ...(wave.rest ? { rest: true } : {}),
      ...(wave.maxInFlight ? { maxInFlight: wave.maxInFlight._limit() } : {}),
      soakSeconds: wave.soak ? Math.round(wave.soak.toSeconds({ integral: false })) : 0,
    }));
  }

  /** The progress deadline in seconds. @internal */
  public _progressDeadlineSeconds(): number {
    return Math.round(this.progressDeadline.toSeconds({ integral: false }));
  }

  /** The failure action as the model spells it. @internal */
  public _failureAction(): FailureAction {
    return this.onFailure === RolloutFailureAction.ROLLBACK ? 'rollback' : 'pause';
  }
}
