// The stella conformance checks in `npm test`, through node:test.
import { conformance } from 'stella-conform-runner/node-test';
import { client } from './client.js';

await conformance({ client, examples: 3 });
