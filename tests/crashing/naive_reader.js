#!/usr/bin/env node
// A newcomer's stream reader that lets every exception escape (exit mode): corrupt JSON
// throws a SyntaxError and an event without a type a TypeError; Node.js prints the stack
// and exits 1, which without crash detection would count as a correct rejection.
"use strict";
const text = require("fs").readFileSync(0, "utf8");
for (const line of text.split("\n")) {
  if (!line.trim()) continue;
  const event = JSON.parse(line);
  if (typeof event.type !== "string") throw new TypeError("event has no type: " + line);
}
process.exit(0);
