// Loaded into a Node.js client with --require by `stella-conform fuzz` (NODE_OPTIONS).
//
// Node writes the V8 coverage named by NODE_V8_COVERAGE only when the process exits,
// which a persistent client never does between cases.  This asks V8 for the coverage
// gathered so far (and resets its counters) just before the client writes a summary,
// so the kit finds one coverage file per case.  The client's code is untouched; its
// output passes through unchanged.
"use strict";

const v8 = require("v8");

const SUMMARY = /"kind"\s*:\s*"summary"/;
const write = process.stdout.write.bind(process.stdout);

process.stdout.write = function writeThenCover(chunk, ...rest) {
  try {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (SUMMARY.test(text)) {
      v8.takeCoverage();
    }
  } catch (error) {
    // coverage is best effort: never change what the client does
  }
  return write(chunk, ...rest);
};
