#!/usr/bin/env node
// Dashboard bug, the JavaScript way: JSON.parse reads every number as a double, so ts,
// token counts and durations above 2^53 lose their units, and the elapsed time and the
// usage totals computed from them are silently wrong. Otherwise the conforming Node.js
// reference reader, extended with what a dashboard shows (preview, usage).
"use strict";

const path = require("path");
const { Reader, LineSplitter } = require(path.join(__dirname, "..", "node", "reference_client.js"));

class Dashboard extends Reader {
  constructor() {
    super();
    this.usage = null;
  }

  fold(t, ev) {
    super.fold(t, ev);
    if (t === "step_usage") {
      this.usage = this.usage || { input_tokens: 0, output_tokens: 0, duration_ms: 0 };
      for (const k of Object.keys(this.usage)) this.usage[k] += ev[k]; // doubles
    }
  }

  summary() {
    return {
      ...super.summary(),
      preview: this.preview.length ? this.preview.join("") : null,
      usage: this.usage,
    };
  }
}

const emit = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const hello = () => emit({ kind: "hello", protocol: 1,
  client: { name: "dashboard-doubles-node", version: "1.0", language: "javascript" },
  profiles: ["reader", "dashboard"] });

function readAll(bytes, onMessage) {
  const reader = new Dashboard();
  const splitter = new LineSplitter((n, line) => {
    for (const m of reader.push(n, line)) onMessage(m);
    return !reader.rejected;
  });
  if (splitter.feed(bytes)) splitter.end();
  for (const m of reader.finish()) onMessage(m);
  return reader;
}

function collect(onDone) {
  const chunks = [];
  process.stdin.on("data", (c) => chunks.push(c));
  process.stdin.on("end", () => onDone(Buffer.concat(chunks)));
}

const mode = process.env.STELLA_CONFORM_MODE || "exit";
if (mode === "persistent") {
  hello();
  const frames = new LineSplitter((n, line) => {
    const msg = JSON.parse(line.toString("utf-8"));
    if (msg.kind === "shutdown") process.exit(0);
    if (msg.kind !== "case") return true;
    const reader = readAll(Buffer.from(msg.stream, "base64"), (m) => emit({ ...m, id: msg.id }));
    emit({ ...reader.summary(), id: msg.id });
    return true;
  });
  process.stdin.on("data", (c) => frames.feed(c));
  process.stdin.on("end", () => process.exit(0));
} else if (mode === "report") {
  hello();
  const reader = new Dashboard();
  const splitter = new LineSplitter((n, line) => {
    for (const m of reader.push(n, line)) emit(m);
    return !reader.rejected;
  });
  const finish = () => {
    for (const m of reader.finish()) emit(m);
    emit(reader.summary());
    process.exitCode = reader.rejected ? 1 : 0;
    process.stdin.destroy();
  };
  process.stdin.on("data", (c) => { if (!splitter.feed(c)) finish(); });
  process.stdin.on("end", () => { if (!reader.rejected) splitter.end(); finish(); });
} else {
  collect((bytes) => {
    const reader = readAll(bytes, () => {});
    process.exit(reader.rejected ? 1 : 0);
  });
}
