#!/usr/bin/env node
// JavaScript pitfall: the parsers of the known types in a plain object, looked up as
// `PARSERS[type]` and "known" when the lookup is truthy. A plain object inherits
// Object.prototype: PARSERS["constructor"], PARSERS["toString"] and
// PARSERS["__proto__"] are found for every table, so an unrecognized event of that type
// is parsed as a known one and the parser throws ("parse is not a function",
// "Cannot convert undefined or null to object"), which this reader reports as the line's
// failure: a valid stream rejected. Otherwise the conforming Node.js reference reader.
"use strict";

const path = require("path");
const { Reader, main } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const FIELDS = {
  stage: ["name", "scope"], text: ["text"], text_delta: ["delta"], reasoning: ["delta"],
  tool_start: ["call"], tool_result: ["call_id", "output", "duration_ms"],
  step_usage: ["step", "model", "input_tokens"], turn_complete: ["model", "cost_usd"],
  run_complete: ["model", "cost_usd"], error: ["message", "retryable"],
  budget_tick: ["spent_usd", "mode"], file_change: ["path", "kind"],
};
const PARSERS = {};
for (const [type, fields] of Object.entries(FIELDS)) {
  PARSERS[type] = (ev) => Object.fromEntries(fields.map((k) => [k, ev[k]]));
}

class PlainObjectDispatch extends Reader {
  push(line, buf) {
    let ev = null;
    try {
      ev = JSON.parse(buf.toString("utf8"));
    } catch (e) {
      // not JSON: the reader says what that is
    }
    if (ev !== null && typeof ev === "object" && typeof ev.type === "string") {
      const parse = PARSERS[ev.type];
      if (parse) {
        try {
          parse(ev); // a known type: its parser reads the event first
        } catch (e) {
          return this.reject(line, `${ev.type}: ${e.message}`);
        }
      }
    }
    return super.push(line, buf);
  }
}

main(PlainObjectDispatch);
