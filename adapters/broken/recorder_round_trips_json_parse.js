#!/usr/bin/env node
// Recorder pitfall, the JavaScript way: each event is stored as
// JSON.stringify(JSON.parse(line)). JSON.parse reads every number as a double, so an
// integer above 2^53 is stored rounded (9007199254740993 becomes 9007199254740992), and a
// number beyond a double (1e400) becomes Infinity, which JSON.stringify writes as null:
// the recording silently holds other values than the stream. Otherwise the conforming
// Node.js reference reader; the recording goes to stdout, exit 1 on a stream it rejects.
"use strict";

const path = require("path");
const { Reader, LineSplitter } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const reader = new Reader();
const out = [];
const splitter = new LineSplitter((n, line) => {
  for (const m of reader.push(n, line)) {
    if (m.outcome === "known" || m.outcome === "unknown") {
      out.push(JSON.stringify(JSON.parse(line.toString("utf8"))) + "\n");
    }
  }
  return !reader.rejected;
});
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  if (splitter.feed(Buffer.concat(chunks))) splitter.end();
  reader.finish();
  process.stdout.write(out.join(""), () => {
    if (reader.rejected) {
      process.stderr.write(`recorder: line ${reader.rejected[0]}: ${reader.rejected[1]}\n`);
      process.exit(1);
    }
    process.exit(0);
  });
});
