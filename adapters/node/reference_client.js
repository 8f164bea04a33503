#!/usr/bin/env node
// The conforming Node.js reference client for stella streams: plain JavaScript, no
// dependencies. Speaks stella-conform's adapter protocol when STELLA_CONFORM_MODE is
// "report" (lockstep) or "persistent"; otherwise reads the stream from stdin (or the
// file named by the first argument) and exits 0 to accept, 1 to reject.
//
// Known limit: JavaScript numbers are doubles, so integer bounds are checked on the
// parsed double (2^64 - 1 and 2^64 look the same after JSON.parse).
"use strict";

const fs = require("fs");
const crypto = require("crypto");
// Texts longer than this travel as a digest when the kit accepts one (protocol v1,
// STELLA_CONFORM_DIGESTS=sha256): a 50 MB text would break the kit's 4 MiB message cap.
const LONG_TEXT = 64 * 1024;
const longText = (t) =>
  t.length <= LONG_TEXT || process.env.STELLA_CONFORM_DIGESTS !== "sha256"
    ? t
    : { sha256: crypto.createHash("sha256").update(t, "utf8").digest("hex") };

const U64 = 2 ** 64;
const U32 = 2 ** 32 - 1;
const str = (v) => typeof v === "string";
const num = (v) => typeof v === "number" && Number.isFinite(v);
const bool = (v) => typeof v === "boolean";
const uint = (max) => (v) => Number.isInteger(v) && v >= 0 && v <= max;
const oneOf = (...xs) => (v) => str(v) && xs.includes(v);
const orNull = (f) => (v) => v === null || f(v);
const obj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const toolCall = (v) => obj(v) && str(v.call_id) && str(v.name) && "input" in v;
const toolOutput = (v) =>
  obj(v) && ((obj(v.ok) && str(v.ok.content)) || (obj(v.error) && str(v.error.message)));

// required fields, then optional ones
const KNOWN = {
  stage: [{ name: str, scope: oneOf("turn", "run") }, {}],
  text: [{ text: str }, {}],
  text_delta: [{ delta: str }, {}],
  reasoning: [{ delta: str }, {}],
  tool_start: [{ call: toolCall }, {}],
  tool_result: [{ call_id: str, output: toolOutput, duration_ms: uint(U64) }, { speculated: bool }],
  step_usage: [
    {
      step: uint(U64), model: str, input_tokens: uint(U64), output_tokens: uint(U64),
      cached_input_tokens: uint(U64), cost_usd: num, duration_ms: uint(U64),
      retries: uint(U32), tool_calls: uint(U64),
    },
    { provider: str, reasoning_tokens: orNull(uint(U64)), output_text: orNull(str), complete: bool },
  ],
  turn_complete: [{ model: str, cost_usd: num }, {}],
  run_complete: [{ model: str, cost_usd: num }, {}],
  error: [{ message: str, retryable: bool }, {}],
  budget_tick: [
    { spent_usd: num, mode: oneOf("off", "observed", "enforced") },
    { limit_usd: orNull(num), session_spent_usd: orNull(num), session_limit_usd: orNull(num),
      deadline_remaining_ms: orNull(uint(U64)) },
  ],
  file_change: [
    { path: str, kind: oneOf("read", "created", "modified", "deleted") },
    { added: uint(U32), removed: uint(U32), diff: orNull(str) },
  ],
};
const ALIASES = { text: ["text", "delta"], text_delta: ["delta", "text"] };
const ARCHIVED_MISSING = { stage: "scope" }; // a stage recorded before scope existed

const utf8 = new TextDecoder("utf-8", { fatal: true });
// TextDecoder drops a leading U+FEFF unless told not to: on the first line that is the
// stream's BOM (reading B of utf8-bom), on any other a character JSON does not take.
const utf8KeepingBOM = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const isBlank = (buf) => buf.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a);

class Reader {
  constructor() {
    this.pending = null; // [line, reason]: corrupt, final only if nothing follows
    this.rejected = null;
    this.known = 0;
    this.unknown = 0;
    this.unknownTypes = new Set();
    this.texts = [];
    this.preview = [];
    this.stages = { turn: [], run: [] };
    this.turns = 0;
    this.runComplete = false;
    this.lastKnown = null;
    this.elapsed = null;
    this.lastTs = null;
  }

  misfit(type, ev) {
    const [req, opt] = KNOWN[type];
    for (const [k, ok] of Object.entries(req)) {
      if (!(k in ev)) return `${type}: missing required field '${k}'`;
      if (!ok(ev[k])) return `${type}: field '${k}' has the wrong shape`;
    }
    for (const [k, ok] of Object.entries(opt)) {
      if (k in ev && !ok(ev[k])) return `${type}: field '${k}' has the wrong shape`;
    }
    if ("ts" in ev && ev.ts !== null && !uint(U64)(ev.ts)) return `${type}: ts must be an integer >= 0`;
    return null;
  }

  clock(ts) {
    if (!Number.isInteger(ts) || ts < 0) return;
    this.elapsed = this.lastTs === null ? 0 : this.elapsed + Math.max(0, ts - this.lastTs);
    this.lastTs = ts;
  }

  reject(line, reason) {
    this.rejected = [line, reason];
    return [{ kind: "line", line, outcome: "reject", reason }];
  }

  push(line, buf) {
    if (this.rejected) return [];
    if (isBlank(buf)) return [{ kind: "line", line, outcome: "blank" }];
    if (this.pending) {
      const [bad, reason] = this.pending;
      this.pending = null;
      return this.reject(bad, `corrupt line: ${reason}`);
    }
    let ev;
    try {
      ev = JSON.parse((line === 1 ? utf8 : utf8KeepingBOM).decode(buf));
    } catch (e) {
      this.pending = [line, String(e.message || e)];
      return [{ kind: "pending", line }];
    }
    if (!obj(ev)) return this.reject(line, "line is JSON but not an object");
    const t = ev.type;
    const archived = str(t) && ARCHIVED_MISSING[t] && !(ARCHIVED_MISSING[t] in ev);
    if (!str(t) || !Object.prototype.hasOwnProperty.call(KNOWN, t) || archived) {
      this.unknown += 1; // inert: counted, nothing more
      if (str(t)) this.unknownTypes.add(t);
      this.clock(ev.ts);
      return [{ kind: "line", line, outcome: "unknown", type: str(t) ? t : null }];
    }
    const alias = ALIASES[t];
    if (alias && !(alias[0] in ev) && alias[1] in ev) {
      ev = { ...ev, [alias[0]]: ev[alias[1]] };
    }
    const problem = this.misfit(t, ev);
    if (problem) return this.reject(line, problem);
    this.fold(t, ev);
    return [{ kind: "line", line, outcome: "known", type: t }];
  }

  fold(t, ev) {
    this.known += 1;
    this.lastKnown = t;
    this.clock(ev.ts);
    if (t === "text_delta") this.preview.push(ev.delta);
    else if (t === "text") { this.texts.push(ev.text); this.preview = []; } // replace, never append
    else if (t === "stage") this.stages[ev.scope].push(ev.name);
    else if (t === "turn_complete") this.turns += 1;
    else if (t === "run_complete") this.runComplete = true;
  }

  finish() {
    if (!this.pending || this.rejected) return [];
    const [line, reason] = this.pending;
    this.pending = null;
    return [{ kind: "line", line, outcome: "torn", reason }];
  }

  summary() {
    return {
      kind: "summary",
      verdict: this.rejected ? "reject" : "accept",
      rejected_line: this.rejected ? this.rejected[0] : null,
      known_events: this.known,
      unrecognized_events: this.unknown,
      unrecognized_types: [...this.unknownTypes].sort(),
      final_text: this.texts.length ? longText(this.texts[this.texts.length - 1]) : null,
      texts: this.texts.map(longText),
      terminator: this.runComplete ? "run_complete" : this.lastKnown === "error" ? "error" : null,
      turns_completed: this.turns,
      stages: this.stages,
      elapsed_ms: this.elapsed,
    };
  }
}

// Splits a byte stream into physical lines as chunks arrive (LF only).
class LineSplitter {
  constructor(onLine) { this.buf = Buffer.alloc(0); this.n = 0; this.onLine = onLine; }
  feed(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let nl;
    while ((nl = this.buf.indexOf(0x0a)) >= 0) {
      const line = this.buf.subarray(0, nl);
      this.buf = this.buf.subarray(nl + 1);
      this.n += 1;
      if (this.onLine(this.n, line) === false) return false;
    }
    return true;
  }
  end() {
    if (this.buf.length) { this.n += 1; this.onLine(this.n, this.buf); }
  }
}

const emit = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const hello = () => emit({ kind: "hello", protocol: 1,
  client: { name: "stella-reader-node", version: "1.0", language: "javascript" },
  profiles: ["reader"], modes: ["report", "persistent"] });

function readAll(bytes, onMessage, ReaderClass = Reader) {
  const reader = new ReaderClass();
  const splitter = new LineSplitter((n, line) => {
    for (const m of reader.push(n, line)) onMessage(m);
    return !reader.rejected;
  });
  if (splitter.feed(bytes)) splitter.end();
  for (const m of reader.finish()) onMessage(m);
  return reader;
}

// ReaderClass: a subclass overriding a hook (the broken and deep clients pass one).
function main(ReaderClass = Reader) {
  const mode = process.env.STELLA_CONFORM_MODE || "exit";
  if (mode === "exit") {
    const src = process.argv[2] ? fs.createReadStream(process.argv[2]) : process.stdin;
    const reader = new ReaderClass();
    const splitter = new LineSplitter((n, line) => { reader.push(n, line); return !reader.rejected; });
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      reader.finish();
      if (reader.rejected) {
        process.stderr.write(`stella-reader-node: line ${reader.rejected[0]}: ${reader.rejected[1]}\n`);
      }
      end(src, reader.rejected ? 1 : 0);
    };
    src.on("data", (c) => { if (!finished && !splitter.feed(c)) done(); });
    src.on("end", () => { if (!finished) { splitter.end(); done(); } });
    return;
  }
  if (mode === "report") {
    hello();
    const reader = new ReaderClass();
    const finish = () => {
      for (const m of reader.finish()) emit(m);
      emit(reader.summary());
      process.exitCode = reader.rejected ? 1 : 0;
      process.stdin.destroy();
    };
    const splitter = new LineSplitter((n, line) => {
      for (const m of reader.push(n, line)) emit(m);
      return !reader.rejected;
    });
    process.stdin.on("data", (c) => { if (!splitter.feed(c)) finish(); });
    process.stdin.on("end", () => { if (!reader.rejected) { splitter.end(); } finish(); });
    return;
  }
  // persistent: one JSON message per stdin line
  hello();
  let stopped = false;
  const frames = new LineSplitter((n, line) => {
    const msg = JSON.parse(line.toString("utf-8"));
    if (msg.kind === "shutdown") { stopped = true; end(process.stdin, 0); return false; }
    if (msg.kind !== "case") return true;
    const reader = readAll(
      Buffer.from(msg.stream, "base64"), (m) => emit({ ...m, id: msg.id }), ReaderClass);
    emit({ ...reader.summary(), id: msg.id });
    return true;
  });
  process.stdin.on("data", (c) => { if (!stopped) frames.feed(c); });
  process.stdin.on("end", () => end(process.stdin, 0));
}

// Ends the process once everything written has reached the kit. A pipe is written
// asynchronously on POSIX: answers that do not fit in it wait inside this process, and
// process.exit() would drop them (a shutdown right after queued cases lost most of their
// answers). Stop reading, set the status, and let Node.js exit when stdout has drained.
function end(input, code) {
  process.exitCode = code;
  input.destroy();
}

if (require.main === module) {
  main();
} else {
  module.exports = { Reader, LineSplitter, main };
}
