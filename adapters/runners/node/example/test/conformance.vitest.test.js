// The stella conformance checks in `npm test`, through vitest.
import { conformance } from 'stella-conform-runner/vitest';
import { client } from './client.js';

await conformance({ client, examples: 3 });
