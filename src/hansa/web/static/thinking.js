// The thinking stream widget (seed 000 §10.5, §17.4): a one-line preview of the latest
// entries, as many as fit the width (CSS wraps the rest out of sight), and a small arrow
// that expands the full list. Collapsed by default; used under answers and in run cards.

import { h, uid } from "./dom.js";

const PREVIEW_ENTRIES = 3;

export class ThinkingList {
  /** @param {string} label what the entries are about, for screen readers */
  constructor(label = "Thinking") {
    this.label = label;
    this.entries = [];
    this.expanded = false;
    const listId = uid("thinking");
    this.preview = h("span.thinking-preview");
    this.count = h("span.thinking-count");
    this.title = h("span.thinking-label", {}, "Thinking");
    this.toggle = h("button.thinking-toggle", {
      type: "button",
      "aria-expanded": "false",
      "aria-controls": listId,
      onclick: () => this.setExpanded(!this.expanded),
    }, h("span.thinking-arrow", { "aria-hidden": "true" }, "▸"), this.title,
    this.preview, this.count);
    this.list = h("ul.thinking-list", { id: listId, hidden: true, "aria-label": `${label} details` });
    this.el = h("div.thinking", { hidden: true }, this.toggle, this.list);
  }

  /** Add one entry {agentName, summary}; duplicates (same message id) are ignored. */
  add(entry) {
    if (entry.id && this.entries.some((e) => e.id === entry.id)) return;
    this.entries.push(entry);
    this.list.append(h("li.thinking-entry", {}, entry.summary));
    this.render();
  }

  render() {
    const n = this.entries.length;
    this.el.hidden = n === 0;
    // Newest first in the DOM: the row lays them out right to left and wraps the oldest away.
    const latest = this.entries.slice(-PREVIEW_ENTRIES).reverse();
    this.preview.replaceChildren(...latest.map((e) => h("span.thinking-entry", {}, e.summary)));
    this.count.textContent = n > 1 ? `${n}` : "";
    this.title.textContent = this.expanded ? "Thinking details" : "Thinking";
    const what = `${this.label.toLowerCase()} details (${n} ${n === 1 ? "entry" : "entries"})`;
    this.toggle.setAttribute("aria-label", `${this.expanded ? "Hide" : "Show"} ${what}`);
  }

  setExpanded(expanded) {
    this.expanded = expanded;
    this.el.classList.toggle("expanded", expanded);
    this.toggle.setAttribute("aria-expanded", String(expanded));
    this.list.hidden = !expanded;
    this.render();
  }
}
