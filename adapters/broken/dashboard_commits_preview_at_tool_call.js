#!/usr/bin/env node
// Dashboard pitfall, the chat-UI way: a message is a list of parts, and a tool call
// starts a new part, so the text streamed so far is committed as a finished text part
// when a tool_start arrives (and the preview emptied). But stella's previews are replaced
// by the `text` that follows them, whenever it comes, and by nothing else: deltas
// streamed before a tool call are still the run's preview, and committing them adds a
// text stella never sent. Otherwise the conforming Node.js reader with what a dashboard
// shows.
"use strict";

const path = require("path");
const { Dashboard, main } = require(path.join(__dirname, "_node_dashboard.js"));

class Committing extends Dashboard {
  fold(t, ev) {
    if (t === "tool_start" && this.preview.length) {
      this.texts.push(this.preview.join(""));
      this.preview = [];
    }
    super.fold(t, ev);
  }
}

main({ name: "dashboard-tool-parts-node", ReaderClass: Committing });
