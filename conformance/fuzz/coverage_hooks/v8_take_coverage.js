// Loaded into a Node.js client with --require by `stella-conform fuzz` (NODE_OPTIONS).
//
// Node writes the V8 coverage named by NODE_V8_COVERAGE only when the process exits,
// which a persistent client never does between cases.  This asks V8 for the coverage
// gathered so far (and resets its counters) just before the client writes a summary,
// so the kit finds one coverage file per case.  The client's code is untouched; its
// output passes through unchanged.
//
// It also writes its process's folder (the folder of the script node runs, links resolved
// as node resolves them) to client-folder-PID.txt in the coverage folder, each node
// process its own: the kit names the scripts of each coverage-PID-*.json file V8 writes
// from that process's folder (feedback.py, script_name), so a script's blocks are the same
// features in any checkout, also when npm (npx, yarn) is the first node process.
"use strict";

const fs = require("fs");
const path = require("path");
const v8 = require("v8");


// No optimizing compiler.  Code TurboFan optimized counts fewer blocks than the
// interpreter's (a small function inlined into its caller stops counting), and V8
// optimizes on a background thread, so a function's optimized code took over at a case
// that depended on how that thread was scheduled: two sessions of one seed saw other
// features from there on (a client's ts check stopped counting at case 93 in one run
// and 270 in another).  The interpreter and Sparkplug (same bytecode, same counters)
// count every block every time.  NODE_OPTIONS may not carry V8 flags; these are set
// before the client's first line runs.  --turbofan and --maglev are the flags' names
// from V8 11 (Node.js 20); before it, --opt.
try {
  const major = Number.parseInt(process.versions.v8, 10);
  v8.setFlagsFromString(major >= 11 ? "--no-turbofan" : "--no-opt");
  if (major >= 11) {
    v8.setFlagsFromString("--no-maglev");
  }
} catch (error) {
  // coverage is best effort: never change what the client does
}

try {
  const main = process.argv[1];
  let folder = process.cwd();
  if (typeof main === "string" && main !== "" && process._eval == null) {
    const real = fs.realpathSync(main);
    folder = fs.statSync(real).isDirectory() ? real : path.dirname(real);
  }
  const file = path.join(process.env.NODE_V8_COVERAGE, `client-folder-${process.pid}.txt`);
  fs.writeFileSync(file, folder);
} catch (error) {
  // no name: the kit names this process's scripts by their full paths
}

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
