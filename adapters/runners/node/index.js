// stella-conform-runner: the stella-conform kit's checks as native Node.js tests.
//
// `grade(options)` starts the kit (`stella-conform run --json REPORT -- CLIENT...`) on the
// user's client and turns its JSON report into a plan: one test per check, named by its
// check id, each passing, failing with the kit's own failure text, or skipped. The
// node:test and vitest entry points (`./node-test.js`, `./vitest.js`) register the plan
// with their runner. The kit's exit status decides what a plan may be: a run that could
// not grade the client (exit 2), a bug in the kit (3) or a stopped run (128 + N) is one
// failing test, never a list of passing ones.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The name of the one test that stands for the whole run when no check can be listed. */
export const RUN_TEST = 'stella-conform';
/** The report format this runner reads. */
export const REPORT_FORMAT = 'stella-conform/report/1';
/** Seconds the whole run may take before the kit is stopped (overridable). */
export const DEFAULT_TIMEOUT = 900;
/** Seconds a stopped kit has to write its report and end before it is killed. */
const GRACE = 30;
/** Bytes of the kit's own output kept to explain a run that could not be graded. */
const KEPT = 64 * 1024;
/** Outcomes that fail a test (a check failed, the client crashed, a case could not be judged). */
const FAILING = new Set(['fail', 'crash', 'error']);

/** Words of a command: an array as given; a string split at whitespace. */
export function words(command) {
  if (Array.isArray(command)) return command.map(String);
  return String(command).trim().split(/\s+/).filter(Boolean);
}

/**
 * The kit's argv for a run: `KIT run --json REPORT --color never [--examples N] [--mode M]
 * [--seed S] ARGS... -- CLIENT...`. STELLA_CONFORM_KIT and STELLA_CONFORM_CLIENT (words,
 * split at whitespace) stand in for `kit` and `client` when set.
 */
export function kitArgv(options, reportPath, env = process.env) {
  const kit = env.STELLA_CONFORM_KIT ? words(env.STELLA_CONFORM_KIT) : words(options.kit ?? 'stella-conform');
  const client = env.STELLA_CONFORM_CLIENT ? words(env.STELLA_CONFORM_CLIENT) : words(options.client ?? []);
  if (client.length === 0) {
    throw new Error('stella-conform-runner: name the client to grade (the client option, or STELLA_CONFORM_CLIENT)');
  }
  const argv = [...kit, 'run', '--json', reportPath, '--color', 'never'];
  if (options.examples !== undefined) argv.push('--examples', String(options.examples));
  if (options.mode !== undefined) argv.push('--mode', String(options.mode));
  if (options.seed !== undefined) argv.push('--seed', String(options.seed));
  argv.push(...words(options.args ?? []), '--', ...client);
  return argv;
}

function keep(tail, chunk) {
  const joined = Buffer.concat([tail, chunk]);
  return joined.length > KEPT ? joined.subarray(joined.length - KEPT) : joined;
}

/** Run argv to its end, or stop it (SIGTERM, then SIGKILL after GRACE s) at `timeout` s. */
function runKit(argv, { cwd, timeout }) {
  return new Promise((resolve) => {
    let out = Buffer.alloc(0);
    let timedOut = false;
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ status: null, error, output: '', timedOut });
      return;
    }
    child.stdout.on('data', (chunk) => { out = keep(out, chunk); });
    child.stderr.on('data', (chunk) => { out = keep(out, chunk); });
    let killer;
    const stopper = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), GRACE * 1000);
    }, timeout * 1000);
    child.on('error', (error) => {
      clearTimeout(stopper);
      clearTimeout(killer);
      resolve({ status: null, error, output: out.toString('utf8'), timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(stopper);
      clearTimeout(killer);
      const status = code ?? (signal ? 128 + (signalNumbers[signal] ?? 0) : null);
      resolve({ status, error: null, output: out.toString('utf8'), timedOut });
    });
  });
}

const signalNumbers = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15 };

function lastLines(text, count = 40) {
  const lines = text.replace(/\s+$/, '').split('\n');
  return lines.slice(-count).join('\n');
}

/** One test standing for the whole run, failing with `message`. */
function runFailure(message) {
  return { tests: [{ name: RUN_TEST, status: 'fail', message }], report: null };
}

/**
 * What a run of the kit lists, as tests: `{tests: [{name, status, message}], report}`,
 * `status` one of `pass`, `fail`, `skip`, `todo` (a listed known failure) and `message`
 * what the test says (a failure's whole text, a skip's reason, a warning's text).
 * `run` is `{status, error, output, timedOut}`: how the kit ended and what it printed;
 * `report` its parsed JSON report (null when it wrote none).
 */
export function plan(run, report, argv) {
  const command = argv.join(' ');
  if (run.error) {
    const missing = run.error.code === 'ENOENT';
    return runFailure(
      missing
        ? `the kit was not found: ${argv[0]} (install stella-conform, or name it: the kit option or STELLA_CONFORM_KIT)`
        : `the kit could not be started (${command}): ${run.error.message}`,
    );
  }
  const said = lastLines(run.output);
  if (run.timedOut) {
    return runFailure(`the kit did not finish in time and was stopped (exit ${run.status}): ${command}\n${said}`);
  }
  if (run.status === 2) {
    return runFailure(`the kit could not grade the client (exit 2: a setup error, no check was graded): ${command}\n${said}`);
  }
  if (run.status === 3) {
    return runFailure(`the kit failed with an internal error (exit 3: a bug in stella-conform): ${command}\n${said}`);
  }
  if (run.status !== 0 && run.status !== 1) {
    return runFailure(`the kit was stopped (exit ${run.status}): ${command}\n${said}`);
  }
  if (!report || report.format !== REPORT_FORMAT || !Array.isArray(report.checks)) {
    return runFailure(`the kit ended (exit ${run.status}) without a ${REPORT_FORMAT} JSON report: ${command}\n${said}`);
  }
  const nowPassing = new Set(report.known_failures_now_passing ?? []);
  const tests = report.checks.map((check) => checkTest(check, nowPassing));
  const failing = tests.some((t) => t.status === 'fail');
  if (report.incomplete) {
    tests.push({ name: RUN_TEST, status: 'fail', message: `the run is incomplete: ${report.incomplete}` });
  } else if (run.status === 1 && !failing) {
    const why = report.error ?? said;
    tests.push({ name: RUN_TEST, status: 'fail', message: `the kit exited 1 (a failing run) with no failing check: ${why}` });
  }
  return { tests, report };
}

function checkTest(check, nowPassing) {
  const name = String(check.id);
  const text = check.explanation ?? `${name}: ${String(check.outcome).toUpperCase()}\n${check.message ?? ''}`;
  if (nowPassing.has(check.id)) {
    return {
      name,
      status: 'fail',
      message: `${name} is listed as a known failure (${check.known_failure}) but now passes: remove it from the list`,
    };
  }
  if (check.outcome === 'skip') return { name, status: 'skip', message: String(check.message ?? '') };
  if (FAILING.has(check.outcome)) {
    if (check.known_failure) return { name, status: 'todo', message: `known failure: ${check.known_failure}` };
    return { name, status: 'fail', message: text };
  }
  if (check.outcome === 'warn') return { name, status: 'pass', message: text };
  return { name, status: 'pass', message: '' };
}

/**
 * Grade a client with the kit: `{tests, report}` as `plan` gives it.
 *
 * options: `client` (argv array, or a string split at whitespace; required unless
 * STELLA_CONFORM_CLIENT is set), `kit` (default `stella-conform` on PATH), `examples`,
 * `mode`, `seed`, `args` (more `stella-conform run` options), `cwd` (where the kit runs
 * and saves failing cases; default the current folder), `timeout` (seconds for the whole
 * run; default 900).
 */
export async function grade(options = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'stella-conform-runner-'));
  try {
    const reportPath = join(folder, 'report.json');
    let argv;
    try {
      argv = kitArgv(options, reportPath);
    } catch (error) {
      return runFailure(error.message);
    }
    const run = await runKit(argv, { cwd: options.cwd, timeout: options.timeout ?? DEFAULT_TIMEOUT });
    let report = null;
    try {
      report = JSON.parse(readFileSync(reportPath, 'utf8'));
    } catch {
      report = null;
    }
    return plan(run, report, argv.map((w) => (w === reportPath ? 'REPORT' : w)));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** An error whose printed form is the kit's text alone (no stack through this package). */
export function failure(message) {
  const error = new Error(message);
  error.name = 'StellaConformFailure';
  error.stack = `${error.name}: ${message}`;
  return error;
}
