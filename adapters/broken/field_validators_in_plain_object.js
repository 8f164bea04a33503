#!/usr/bin/env node
// JavaScript pitfall: each known type's field validators in a plain object, and every
// field of an event checked with `if (key in VALIDATORS[type]) ok = VALIDATORS[type][key](value)`,
// unknown keys skipped. `in` sees inherited members too: a field named "constructor",
// "hasOwnProperty" or "__proto__" is "known", and its "validator" is Object.prototype's
// member: hasOwnProperty("x") and isPrototypeOf("x") are false, __proto__ is no
// function (a TypeError, reported as the line's failure): the line is rejected.
// Otherwise the conforming Node.js reference reader.
"use strict";

const path = require("path");
const { Reader, main } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const str = (v) => typeof v === "string";
const num = (v) => typeof v === "number";
// per known type, its fields' validators (the reader above checks the same, and more)
const VALIDATORS = {
  stage: { name: str, scope: str }, text: { text: str }, text_delta: { delta: str },
  reasoning: { delta: str }, tool_start: {}, tool_result: { call_id: str },
  step_usage: { model: str, cost_usd: num }, turn_complete: { model: str, cost_usd: num },
  run_complete: { model: str, cost_usd: num }, error: { message: str },
  budget_tick: { spent_usd: num }, file_change: { path: str },
};

class InheritedValidators extends Reader {
  misfit(type, ev) {
    const problem = super.misfit(type, ev);
    if (problem) return problem;
    const fields = VALIDATORS[type] || {};
    try {
      for (const [key, value] of Object.entries(ev)) {
        if (key in fields && !fields[key](value)) return `${type}: field '${key}' is invalid`;
      }
    } catch (e) {
      return `${type}: ${e.message}`;
    }
    return null;
  }
}

main(InheritedValidators);
