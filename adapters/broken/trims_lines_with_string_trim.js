#!/usr/bin/env node
// Node.js pitfall: each line goes through String.prototype.trim() before JSON.parse
// (`JSON.parse(line.trim())`, to forgive a stray "\r" or space). trim() removes
// ECMAScript's WhiteSpace and LineTerminator, which is more than JSON's four: among them
// U+FEFF, the byte order mark. A line after the first that starts or ends with U+FEFF is
// not JSON (a BOM is at most the stream's first bytes), and a stream holding one before
// its last line must be rejected; this reader parses what trim() leaves, and a line of
// only U+FEFF is blank to it. Otherwise the conforming Node.js reference reader.
"use strict";

const path = require("path");
const { Reader, main } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const utf8 = new TextDecoder("utf-8", { fatal: true });

class Trimming extends Reader {
  push(line, buf) {
    let text;
    try {
      text = utf8.decode(buf);
    } catch (e) {
      return super.push(line, buf);
    }
    return super.push(line, Buffer.from(text.trim(), "utf8"));
  }
}

main(Trimming);
