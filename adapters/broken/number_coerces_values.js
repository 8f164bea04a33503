#!/usr/bin/env node
// JavaScript pitfall: numbers read with `Number(raw.input_tokens)`, the coercion every
// "parse the usage block" helper writes. Number("1200") is 1200, Number("") is 0,
// Number(true) is 1: a count written as a string, an empty string or a boolean passes as
// an integer, and a bad body is accepted. Otherwise the conforming Node.js reference
// reader.
"use strict";

const path = require("path");
const { Reader, main } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const NUMBERS = {
  step_usage: ["step", "input_tokens", "output_tokens", "cached_input_tokens", "cost_usd",
    "duration_ms", "retries", "tool_calls"],
  tool_result: ["duration_ms"], turn_complete: ["cost_usd"], run_complete: ["cost_usd"],
};

class CoercingNumbers extends Reader {
  misfit(type, ev) {
    const names = Object.prototype.hasOwnProperty.call(NUMBERS, type) ? NUMBERS[type] : [];
    const read = { ...ev };
    for (const k of names) if (k in read && read[k] !== null) read[k] = Number(read[k]);
    return super.misfit(type, read);
  }
}

main(CoercingNumbers);
