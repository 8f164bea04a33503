#!/usr/bin/env node
// Dashboard pitfall, the React-state way: the first text_delta opens a message and its
// index is kept (`current ??= messages.length`), later deltas grow it, and a `text`
// replaces its content, but `current` is never cleared. A later step's text that
// streamed no preview is written into that old message instead of adding its own: the
// transcript loses a text. Otherwise the conforming Node.js reader with what a dashboard
// shows.
"use strict";

const path = require("path");
const { Dashboard, main } = require(path.join(__dirname, "_node_dashboard.js"));

class Pointing extends Dashboard {
  fold(t, ev) {
    if (t === "text_delta") this.current ??= this.texts.length;
    super.fold(t, ev);
    if (t === "text" && this.current !== undefined && this.current < this.texts.length - 1) {
      this.texts[this.current] = this.texts.pop();
    }
  }
}

main({ name: "dashboard-message-pointer-node", ReaderClass: Pointing });
