/**
 * Progress of a long command on stderr: the phase it is in (type-check, running the fleet program,
 * writing the output) and the time since it started. On a terminal one status line is redrawn every
 * second and cleared at the end; otherwise (CI logs, pipes) a plain line is written when a phase starts.
 */

/** Where progress goes: process.stderr, or a stand-in in tests. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export class Progress {
  private readonly started = Date.now();
  private current: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Whether the status line is on screen (a terminal only). */
  private drawn = false;
  /** Whether the last text passed through ended a line (the status line may only be drawn at a line start). */
  private atLineStart = true;

  /**
   * @param label what is running, for example `pullfleet synth`
   * @param stream where to write (default process.stderr)
   * @param tty redraw one status line (default: whether `stream` is a terminal)
   */
  constructor(
    private readonly label: string,
    private readonly stream: ProgressStream = process.stderr,
    private readonly tty: boolean = stream.isTTY === true,
  ) {}

  /** The phase entered last, if any. */
  get phase(): string | undefined {
    return this.current;
  }

  /** Seconds since the command started. */
  elapsedSeconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  /** Enters `phase`; entering the phase it is in does nothing. */
  enter(phase: string): void {
    if (phase === this.current) return;
    this.current = phase;
    if (!this.tty) {
      this.pass(`${this.label}: ${phase} (${this.elapsedSeconds().toFixed(1)} s)\n`);
      return;
    }
    this.draw();
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  /** Writes `text` (for example what the fleet program prints) without mixing it into the status line. */
  write(text: string): void {
    if (text === '') return;
    this.pass(text);
    if (this.tty && this.atLineStart) this.draw();
  }

  /** Stops redrawing and clears the status line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private pass(text: string): void {
    this.clear();
    this.stream.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private clear(): void {
    if (!this.drawn) return;
    this.stream.write('\r\x1b[K');
    this.drawn = false;
  }

  private draw(): void {
    if (!this.tty || this.current === undefined || !this.atLineStart) return;
    this.stream.write(
      `${this.drawn ? '\r\x1b[K' : ''}${this.label}: ${this.current}… ${Math.floor(this.elapsedSeconds())} s`,
    );
    this.drawn = true;
  }
}
