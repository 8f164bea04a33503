#!/usr/bin/env node
// JavaScript pitfall: the envelope's cost read as `envelope.cost_usd ?? 0` (or `|| 0`), the
// common way to default a number that might be missing. The pre-flight error envelope ("no
// API key found", an unknown provider) has no cost_usd key, so this reader reports a run
// that cost $0.00 where stella reported no cost at all: an absent cost is null, not zero
// (docs/contract-readings.md). Otherwise a conforming envelope reader: the schema_version
// gate, the failure shapes, files_touched one level in, the events by the stream rules
// (the conforming Node.js reference reader, one event a line). JSON.parse reads every
// number as a double, so the token sums (u64, above 2^53 in some envelopes) are not among
// the fields its hello says it computes.
"use strict";

const fs = require("fs");
const path = require("path");
const v8 = require("v8");
const vm = require("vm");
const { Reader } = require(path.join(__dirname, "..", "node", "reference_client.js"));

const NAME = "stella-envelope-cost-or-zero-node";
const QUERY = ["stats", "usage report", "inspect", "calibration", "memory list", "context list",
  "context validate"];
const COMPUTES = ["status", "text", "model", "stop_reason", "cost_usd", "files_touched",
  "unrecognized_events", "rows"];
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

class Refused extends Error {}

// A double cannot tell 2^64 - 1 (a u64) from 2^64 (beyond one); the number's source text
// can. JSON.parse hands its reviver the source (Node.js 21 and newer; on Node.js 20 behind
// V8's flag, which a context created after it is set has).
const hasSource = (parse) => parse("1", (k, v, context) => context !== undefined);
let parseWithSource = JSON.parse;
if (!hasSource(JSON.parse)) {
  v8.setFlagsFromString("--harmony-json-parse-with-source");
  parseWithSource = vm.runInNewContext("JSON.parse");
}
const U64_MAX = 2n ** 64n - 1n;
const exactly = (key, value, context) =>
  typeof value === "number" && value === 2 ** 64 && context && /^-?\d+$/.test(context.source)
    && BigInt(context.source) > U64_MAX ? 2 ** 65 : value; // beyond u64 as a double too

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function isQuery(command) {
  let words = command.split(/\s+/).filter((w) => w && !w.startsWith("-"));
  if (words[0] === "stella") words = words.slice(1);
  const text = words.join(" ");
  return QUERY.some((q) => text === q || text.startsWith(q + " "));
}

function optional(doc, key, kind) {
  const value = doc[key];
  if (value === undefined || value === null) return null;
  if (!kind(value)) throw new Refused(`'${key}' has an unexpected type`);
  return value;
}

function filesTouched(doc) {
  const payload = optional(doc, "files_touched", isObject);
  if (payload === null || payload.files_touched === undefined || payload.files_touched === null) {
    return null;
  }
  if (!Array.isArray(payload.files_touched)) {
    throw new Refused("files_touched.files_touched is not an array");
  }
  return payload.files_touched.map((record) => {
    if (!isObject(record) || typeof record.path !== "string") {
      throw new Refused("a files_touched record has no path");
    }
    return record.path;
  });
}

// The events array by the stream rules: each event read as a line of its own.
function unrecognizedEvents(doc) {
  const events = optional(doc, "events", Array.isArray);
  if (events === null) return null;
  const reader = new Reader();
  events.forEach((event, index) => {
    reader.push(index + 1, Buffer.from(JSON.stringify(event), "utf-8"));
    if (reader.rejected || reader.pending) {
      throw new Refused(`events[${index}]: ${reader.rejected ? reader.rejected[1] : "bad"}`);
    }
  });
  return reader.unknown;
}

function read(data, command) {
  let doc;
  try {
    doc = parseWithSource(utf8.decode(data), exactly);
  } catch (e) {
    throw new Refused(`not a JSON document: ${e.message || e}`);
  }
  if (!isObject(doc)) throw new Refused("the envelope is not an object");
  if (doc.schema_version !== 1) {
    throw new Refused(`unsupported schema_version ${JSON.stringify(doc.schema_version)}; this script knows 1`);
  }
  if (isQuery(command)) {
    if ("rows" in doc && !Array.isArray(doc.rows)) throw new Refused("rows is not an array");
    return { rows: Array.isArray(doc.rows) ? doc.rows.length : null };
  }
  if (typeof doc.status !== "string") throw new Refused("status is missing");
  const str = (v) => typeof v === "string";
  return {
    status: doc.status,
    text: optional(doc, "text", str),
    model: optional(doc, "model", str),
    stop_reason: optional(doc, "reason", str),
    cost_usd: doc.cost_usd ?? 0, // the pitfall: no cost reads as $0.00
    files_touched: filesTouched(doc),
    unrecognized_events: unrecognizedEvents(doc),
  };
}

function summarize(data, command) {
  try {
    return { kind: "summary", verdict: "accept", ...read(data, command) };
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    return { kind: "summary", verdict: "reject", error: e.message };
  }
}

const emit = (m) => process.stdout.write(JSON.stringify(m) + "\n");

function main() {
  const mode = process.env.STELLA_CONFORM_MODE || "exit";
  const command = process.env.STELLA_CONFORM_COMMAND || "stella run --output-format json";
  const hello = { kind: "hello", protocol: 1, profiles: ["envelope"], computes: COMPUTES,
    client: { name: NAME, version: "1.0", language: "javascript" } };
  if (mode === "persistent") {
    emit(hello);
    let pending = Buffer.alloc(0);
    let stopped = false;
    process.stdin.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      let nl;
      while (!stopped && (nl = pending.indexOf(0x0a)) >= 0) {
        const message = JSON.parse(pending.subarray(0, nl).toString("utf-8"));
        pending = pending.subarray(nl + 1);
        if (message.kind === "shutdown") {
          stopped = true;
          process.exitCode = 0;
          process.stdin.destroy();
        } else if (message.kind === "case") {
          const ran = (message.env || {}).STELLA_CONFORM_COMMAND || command;
          emit({ ...summarize(Buffer.from(message.stream, "base64"), ran), id: message.id });
        }
      }
    });
    return;
  }
  if (mode === "report") emit(hello); // before reading: the kit sends the document after it
  const data = fs.readFileSync(process.argv[2] || 0);
  const summary = summarize(data, command);
  if (mode === "report") emit(summary);
  else if (summary.verdict === "reject") process.stderr.write(`${NAME}: ${summary.error}\n`);
  process.exitCode = summary.verdict === "accept" ? 0 : 1;
}

main();
