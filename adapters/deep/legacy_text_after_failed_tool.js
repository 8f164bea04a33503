#!/usr/bin/env node
// Deep bug (rule 4): rejects a valid stream only when three things line up.
//
// After a failed tool call it expects the model's next text to explain the failure,
// and reads that text from the self-describing field only, without the legacy
// spelling every other text goes through. Legacy spellings must be read (rule 4), so
// the stream is valid; the client wrongly rejects it only when all of these hold:
//
// 1. a tool_result whose output is an error,
// 2. immediately followed by a text event,
// 3. that uses the legacy field spelling (delta instead of text).
//
// Each condition alone is common; together they are rare in random runs, which is
// what makes this a test of `stella-conform fuzz` (docs/fuzzing.md).
"use strict";

const { Reader, main } = require("../node/reference_client.js");

class ExplainFailureReader extends Reader {
  constructor() {
    super();
    this.afterFailure = false;
  }

  push(line, buf) {
    let raw = null;
    try {
      raw = JSON.parse(buf.toString("utf8"));
    } catch (e) {
      raw = null;
    }
    const type = raw !== null && typeof raw === "object" ? raw.type : undefined;
    if (!this.rejected && type === "text" && this.afterFailure && typeof raw.text !== "string") {
      return this.reject(line, "the text after a failed tool call has no text field");
    }
    const out = super.push(line, buf);
    const last = out.length ? out[out.length - 1] : null;
    if (last && (last.outcome === "known" || last.outcome === "unknown")) {
      const output = last.outcome === "known" && type === "tool_result" ? raw.output : null;
      this.afterFailure = output !== null && typeof output === "object" && "error" in output;
    }
    return out;
  }
}

if (require.main === module) {
  main(ExplainFailureReader);
}
