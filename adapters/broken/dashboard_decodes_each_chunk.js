#!/usr/bin/env node
// Node.js pitfall: each 'data' chunk is turned into a string on its own,
// `buffered += chunk.toString()`, before the text is split into lines (the
// `process.stdin.on("data", ...)` of countless CLIs). Node.js reads a pipe 64 KiB at a
// time, and a character whose bytes straddle two chunks is decoded as two halves, each
// U+FFFD: the text the dashboard shows is not the text stella wrote. The fix is
// `process.stdin.setEncoding("utf8")` (a StringDecoder keeps a split character whole) or
// splitting the bytes before decoding them. Otherwise the conforming Node.js reader with
// what a dashboard shows; the stream reaches it 64 KiB at a time in every mode.
"use strict";

const path = require("path");
const { main } = require(path.join(__dirname, "_node_dashboard.js"));

const CHUNK = 64 * 1024;

function* decodedChunks(bytes) {
  for (let at = 0; at < bytes.length; at += CHUNK) {
    yield Buffer.from(bytes.subarray(at, at + CHUNK).toString(), "utf8");
  }
}

main({ name: "dashboard-chunk-strings-node", pieces: decodedChunks });
