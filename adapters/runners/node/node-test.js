// The kit's checks as node:test tests: one test per check, named by its check id.
//
//   import { conformance } from 'stella-conform-runner/node-test';
//   await conformance({ client: ['node', 'dist/cli.js'], examples: 5 });

import { test } from 'node:test';
import { failure, grade } from './index.js';

/** Grade the client with the kit, then register one node:test test per check. */
export async function conformance(options = {}) {
  const graded = await grade(options);
  for (const planned of graded.tests) {
    if (planned.status === 'skip') {
      test(planned.name, { skip: planned.message || true }, () => {});
    } else if (planned.status === 'todo') {
      test(planned.name, { todo: planned.message }, () => {
        throw failure(planned.message);
      });
    } else if (planned.status === 'fail') {
      test(planned.name, () => {
        throw failure(planned.message);
      });
    } else {
      test(planned.name, (t) => {
        if (planned.message) t.diagnostic(planned.message);
      });
    }
  }
  return graded;
}
