import type { Graded, Options } from './index.js';
export type { Graded, Options, PlannedTest } from './index.js';
/** Grade the client with the kit, then register one test per check. */
export function conformance(options?: Options): Promise<Graded>;
