// The kit's checks as vitest tests: one test per check, named by its check id.
//
//   // conformance.test.js
//   import { conformance } from 'stella-conform-runner/vitest';
//   await conformance({ client: ['node', 'dist/cli.js'], examples: 5 });

import { test } from 'vitest';
import { failure, grade } from './index.js';

/** Grade the client with the kit, then register one vitest test per check. */
export async function conformance(options = {}) {
  const graded = await grade(options);
  for (const planned of graded.tests) {
    if (planned.status === 'skip') {
      test.skip(planned.name, () => {});
    } else if (planned.status === 'todo') {
      test.todo(planned.name);
    } else if (planned.status === 'fail') {
      test(planned.name, () => {
        throw failure(planned.message);
      });
    } else {
      test(planned.name, () => {
        if (planned.message) console.warn(planned.message);
      });
    }
  }
  return graded;
}
