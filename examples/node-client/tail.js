#!/usr/bin/env node
// stella-tail: prints the final answer of a stella run read from stdin.
// Exit 0 when the stream was read, 1 when it was corrupt (the stella-conform
// exit-code convention). It uses the reference reader as its parsing library.
"use strict";
const { Reader, LineSplitter } = require("../../adapters/node/reference_client.js");

const reader = new Reader();
const lines = new LineSplitter((n, line) => {
  reader.push(n, line);
  return !reader.rejected;
});
const done = () => {
  reader.finish();
  if (reader.rejected) {
    process.stderr.write(`stella-tail: line ${reader.rejected[0]}: ${reader.rejected[1]}\n`);
    process.exit(1);
  }
  const summary = reader.summary();
  if (summary.final_text !== null) process.stdout.write(summary.final_text + "\n");
  process.exit(0);
};
process.stdin.on("data", (chunk) => { if (!lines.feed(chunk)) done(); });
process.stdin.on("end", () => { lines.end(); done(); });
