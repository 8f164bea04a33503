#!/usr/bin/env node
// JavaScript pitfall: `const body = raw.text || raw.delta`, the TypeScript SDK's way to
// read "the field, else its legacy spelling". `||` takes every falsy value for a missing
// one: a valid {"type":"text","text":""} (an empty answer) has no body to this reader,
// which rejects the line. Otherwise the conforming Node.js reference reader.
"use strict";

const path = require("path");
const { Reader, main } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const FIELDS = { text: ["text", "delta"], text_delta: ["delta", "text"], reasoning: ["delta"] };

class TextOrDelta extends Reader {
  misfit(type, ev) {
    const names = FIELDS[type];
    if (Object.prototype.hasOwnProperty.call(FIELDS, type)) {
      const body = ev[names[0]] || ev[names[1]];
      if (!body) return `${type}: missing required field '${names[0]}'`;
    }
    return super.misfit(type, ev);
  }
}

main(TextOrDelta);
