#!/usr/bin/env node
// Node.js pitfall: a hand-written line splitter, `const lines = buffered.split("\n");
// buffered = lines.pop();`, that never reads what is left in `buffered` when the stream
// ends. A last line without its newline is dropped: a run cut off on a text shows no
// text, one cut off on a text_delta no preview. (readline.createInterface flushes the
// rest at the end; the hand-written loop forgets the 'end' handler.) Otherwise the
// conforming Node.js reader with what a dashboard shows.
"use strict";

const path = require("path");
const { main } = require(path.join(__dirname, "_node_dashboard.js"));

main({ name: "dashboard-split-pop-node", flush: false });
