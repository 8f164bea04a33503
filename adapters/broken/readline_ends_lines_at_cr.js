#!/usr/bin/env node
// Node.js pitfall: the lines come from readline.createInterface() (the standard library's
// line reader, and every "read a file line by line" answer). readline ends a line at "\n",
// "\r\n" *and a lone "\r"*: a carriage return between two tokens, which JSON allows as
// whitespace inside a line, cuts the event in two, and neither half parses: a valid
// stream rejected. Otherwise the conforming Node.js reference reader, fed readline's
// lines; its input is read as latin1, so each line's bytes reach the reader unchanged
// (readline decodes UTF-8 with replacement by default, another flaw than this one).
"use strict";

const path = require("path");
const readline = require("readline");
const { Readable } = require("stream");
const { Reader } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const emit = (m) => process.stdout.write(JSON.stringify(m) + "\n");

// Feed each line readline gives to the reader; resolve with the reader at the end.
function readLines(input, onMessage) {
  const reader = new Reader();
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  return new Promise((resolve) => {
    const done = () => {
      rl.removeAllListeners("line");
      for (const m of reader.finish()) onMessage(m);
      resolve(reader);
    };
    rl.on("line", (text) => {
      if (reader.rejected) return;
      n += 1;
      for (const m of reader.push(n, Buffer.from(text, "latin1"))) onMessage(m);
      if (reader.rejected) { rl.close(); }
    });
    rl.on("close", done);
  });
}

const mode = process.env.STELLA_CONFORM_MODE || "exit";
const hello = () => emit({ kind: "hello", protocol: 1,
  client: { name: "readline-reader-node", version: "1.0", language: "javascript" },
  profiles: ["reader"], modes: ["report", "persistent"] });

process.stdin.setEncoding("latin1");
if (mode === "exit") {
  readLines(process.stdin, () => {}).then((reader) => process.exit(reader.rejected ? 1 : 0));
} else if (mode === "report") {
  hello();
  readLines(process.stdin, emit).then((reader) => {
    emit(reader.summary());
    process.exitCode = reader.rejected ? 1 : 0;
    process.stdin.destroy();
  });
} else {
  hello();
  let queue = Promise.resolve();
  const frames = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  frames.on("line", (line) => {
    const msg = JSON.parse(line);
    queue = queue.then(async () => {
      if (msg.kind === "shutdown") process.exit(0);
      if (msg.kind !== "case") return;
      const input = Readable.from([Buffer.from(msg.stream, "base64").toString("latin1")]);
      const reader = await readLines(input, (m) => emit({ ...m, id: msg.id }));
      emit({ ...reader.summary(), id: msg.id });
    });
  });
  frames.on("close", () => queue.then(() => process.exit(0)));
}
