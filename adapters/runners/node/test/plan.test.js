// What the runner lists for each way the kit can end (the kit's exit statuses:
// src/stella_conform/errors.py): only exit 0 and 1 with a report list checks.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RUN_TEST, grade, plan } from '../index.js';

const ARGV = ['stella-conform', 'run', '--json', 'REPORT', '--', 'client'];
const ended = (status, output = '') => ({ status, error: null, output, timedOut: false });
const check = (id, outcome, more = {}) => ({ id, outcome, message: `${id} said`, known_failure: null, ...more });
const report = (checks, more = {}) => ({ format: 'stella-conform/report/1', checks, known_failures_now_passing: [], ...more });
const statuses = (planned) => Object.fromEntries(planned.tests.map((t) => [t.name, t.status]));

test('exit 0: every check listed, a skip skipped, a warning passing with its text', () => {
  const planned = plan(ended(0), report([
    check('A', 'pass'), check('B', 'skip'), check('C', 'warn', { explanation: 'C: WARN\nwhy' }),
  ]), ARGV);
  assert.deepEqual(statuses(planned), { A: 'pass', B: 'skip', C: 'pass' });
  assert.equal(planned.tests[1].message, 'B said');
  assert.equal(planned.tests[2].message, 'C: WARN\nwhy');
});

test('exit 1: a failing check fails with its explanation; crash and error fail too', () => {
  const planned = plan(ended(1), report([
    check('A', 'fail', { explanation: 'A: FAIL\nthe text' }), check('B', 'crash'), check('C', 'error'),
  ]), ARGV);
  assert.deepEqual(statuses(planned), { A: 'fail', B: 'fail', C: 'fail' });
  assert.equal(planned.tests[0].message, 'A: FAIL\nthe text');
});

test('a listed known failure is a todo; one that now passes fails, saying so', () => {
  const planned = plan(ended(1), report(
    [check('A', 'fail', { known_failure: 'upstream bug' }), check('B', 'pass', { known_failure: 'old' })],
    { known_failures_now_passing: ['B'] },
  ), ARGV);
  assert.deepEqual(statuses(planned), { A: 'todo', B: 'fail' });
  assert.match(planned.tests[1].message, /now passes: remove it from the list/);
});

for (const [status, words] of [[2, 'exit 2: a setup error'], [3, 'exit 3: a bug'], [143, 'stopped (exit 143)']]) {
  test(`exit ${status}: one failing test, whatever the report lists`, () => {
    const planned = plan(ended(status, 'stella-conform: its words'), report([check('A', 'pass')]), ARGV);
    assert.deepEqual(statuses(planned), { [RUN_TEST]: 'fail' });
    assert.ok(planned.tests[0].message.includes(words), planned.tests[0].message);
    assert.ok(planned.tests[0].message.includes('stella-conform: its words'));
  });
}

test('exit 1 with no failing check, an incomplete run, no report: a failing run test', () => {
  assert.equal(statuses(plan(ended(1), report([check('A', 'pass')]), ARGV))[RUN_TEST], 'fail');
  const cut = plan(ended(0), report([check('A', 'pass')], { incomplete: 'stopped by SIGTERM' }), ARGV);
  assert.deepEqual(statuses(cut), { A: 'pass', [RUN_TEST]: 'fail' });
  assert.deepEqual(statuses(plan(ended(0), null, ARGV)), { [RUN_TEST]: 'fail' });
  assert.deepEqual(statuses(plan(ended(0), { format: 'other', checks: [] }, ARGV)), { [RUN_TEST]: 'fail' });
});

test('a kit that outlives the timeout is stopped, and the run is one failing test', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'stella-runner-test-'));
  try {
    const kit = join(folder, 'slow-kit');
    writeFileSync(kit, '#!/bin/sh\nexec sleep 600\n');
    chmodSync(kit, 0o755);
    const planned = await grade({ kit: [kit], client: ['client'], timeout: 1 });
    assert.deepEqual(statuses(planned), { [RUN_TEST]: 'fail' });
    assert.match(planned.tests[0].message, /did not finish in time and was stopped/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
