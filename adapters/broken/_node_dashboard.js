// Not a client: what the Node.js dashboards beside it share. The conforming Node.js
// reference reader, extended with what a dashboard shows (the preview), and the adapter
// protocol around it; each dashboard swaps one piece: how the bytes reach the line
// splitter (pieces), whether the splitter's last piece is read (flush), or the reader.
"use strict";

const path = require("path");
const { Reader, LineSplitter } = require(path.join(__dirname, "..", "node", "reference_client.js"));

class Dashboard extends Reader {
  summary() {
    return { ...super.summary(), preview: this.preview.length ? this.preview.join("") : null };
  }
}

const emit = (m) => process.stdout.write(JSON.stringify(m) + "\n");
// What these dashboards compute: not elapsed_ms nor usage, which JSON.parse's doubles
// cannot hold above 2^53 (dashboard_reads_integers_as_doubles.js is that flaw's client).
const COMPUTES = ["rejected_line", "known_events", "unrecognized_events", "unrecognized_types",
  "final_text", "texts", "preview", "terminator", "turns_completed", "stages"];

// One stream read by the dashboard: its messages go to onMessage.
function readAll(bytes, onMessage, opts) {
  const reader = new opts.ReaderClass();
  const splitter = new LineSplitter((n, line) => {
    for (const m of reader.push(n, line)) onMessage(m);
    return !reader.rejected;
  });
  let going = true;
  for (const piece of opts.pieces(bytes)) {
    if (!(going = splitter.feed(piece))) break;
  }
  if (going && opts.flush) splitter.end();
  for (const m of reader.finish()) onMessage(m);
  return reader;
}

// Runs a dashboard in the mode the kit chose: { name, ReaderClass, pieces, flush }.
function main(options) {
  const opts = { ReaderClass: Dashboard, pieces: (b) => [b], flush: true, ...options };
  const hello = () => emit({ kind: "hello", protocol: 1, profiles: ["reader", "dashboard"],
    client: { name: opts.name, version: "1.0", language: "javascript" }, computes: COMPUTES });
  const mode = process.env.STELLA_CONFORM_MODE || "exit";
  if (mode === "persistent") {
    hello();
    const frames = new LineSplitter((n, line) => {
      const msg = JSON.parse(line.toString("utf-8"));
      if (msg.kind === "shutdown") { process.exitCode = 0; process.stdin.destroy(); return false; }
      if (msg.kind !== "case") return true;
      const reader = readAll(Buffer.from(msg.stream, "base64"), (m) => emit({ ...m, id: msg.id }), opts);
      emit({ ...reader.summary(), id: msg.id });
      return true;
    });
    process.stdin.on("data", (c) => frames.feed(c));
    process.stdin.on("end", () => { process.exitCode = 0; });
    return;
  }
  const chunks = [];
  process.stdin.on("data", (c) => chunks.push(c));
  process.stdin.on("end", () => {
    const report = mode === "report";
    if (report) hello();
    const reader = readAll(Buffer.concat(chunks), report ? emit : () => {}, opts);
    if (report) emit(reader.summary());
    process.exitCode = reader.rejected ? 1 : 0;
  });
}

module.exports = { Dashboard, main };
