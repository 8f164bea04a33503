/** How to start the kit on a client. */
export interface Options {
  /** The client's command: an argv array, or a string split at whitespace (STELLA_CONFORM_CLIENT overrides). */
  client?: string[] | string;
  /** The kit's command (default `stella-conform` on PATH; STELLA_CONFORM_KIT overrides). */
  kit?: string[] | string;
  /** Generated cases per check (`--examples`). */
  examples?: number;
  /** `auto` (the kit's default), `exit`, `report` or `persistent`. */
  mode?: 'auto' | 'exit' | 'report' | 'persistent';
  /** `--seed`. */
  seed?: number;
  /** More `stella-conform run` options, e.g. `['--profile', 'dashboard']`. */
  args?: string[] | string;
  /** Where the kit runs and saves failing cases (default: the current folder). */
  cwd?: string;
  /** Seconds the whole run may take before the kit is stopped (default 900). */
  timeout?: number;
}

/** One planned test: `todo` is a listed known failure. */
export interface PlannedTest {
  name: string;
  status: 'pass' | 'fail' | 'skip' | 'todo';
  message: string;
}

export interface Graded {
  tests: PlannedTest[];
  /** The kit's JSON report (schemas/report.schema.json), null when it wrote none. */
  report: Record<string, unknown> | null;
}

export const RUN_TEST: string;
export const REPORT_FORMAT: string;
export const DEFAULT_TIMEOUT: number;
export function words(command: string[] | string): string[];
export function kitArgv(options: Options, reportPath: string, env?: Record<string, string | undefined>): string[];
export function plan(
  run: { status: number | null; error: (Error & { code?: string }) | null; output: string; timedOut: boolean },
  report: Record<string, unknown> | null,
  argv: string[],
): Graded;
export function grade(options?: Options): Promise<Graded>;
export function failure(message: string): Error;
