// The usage view (issue 13 item 9): tokens and cost of the tenant's model calls
// (GET /api/usage), in total and as small bar charts per agent and per run, and per model as
// a list. Bars are CSS, hidden from assistive technology: each bar's row says its numbers in
// text. Loaded afresh each time it is opened.

import { api } from "./api.js";
import { h } from "./dom.js";
import { sheet } from "./sheet.js";

const COUNT = new Intl.NumberFormat("en-US");

/** "1,234" */
export const count = (n) => COUNT.format(n);

/** "$0.0123": cents for large sums, four places for small ones, "$0" for none. */
export function dollars(usd) {
  if (!usd) return "$0";
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`;
}

const calls = (n) => `${count(n)} ${n === 1 ? "call" : "calls"}`;

export class UsageDialog {
  /**
   * @param {object} ctx {agents: Map of id → agent}
   */
  constructor(ctx) {
    this.ctx = ctx;
    this.totals = h("dl.usage-totals", { "aria-label": "Totals" });
    this.agents = h("ol.usage-bars", { "aria-labelledby": "usage-agents-title" });
    this.runs = h("ol.usage-bars", { "aria-labelledby": "usage-runs-title" });
    this.models = h("ul.usage-models", { "aria-labelledby": "usage-models-title" });
    this.body = h("div.usage-body", { hidden: true },
      this.totals,
      h("h3.usage-title", { id: "usage-agents-title" }, "Tokens per agent"), this.agents,
      h("h3.usage-title", { id: "usage-runs-title" }, "Tokens per run (the 20 largest)"), this.runs,
      h("h3.usage-title", { id: "usage-models-title" }, "Per model"), this.models);
    ({ el: this.el, status: this.status, open: this.open } = sheet({
      className: "usage-view", titleId: "usage-title", title: "Usage",
      closeLabel: "Close the usage",
      intro: "Tokens and cost of the model calls of this tenant.",
      load: () => this.load(),
    }, this.body));
  }

  async load() {
    this.status.textContent = "Loading…";
    try {
      const usage = await api.usage();
      this.status.textContent = usage.totals.calls ? "" : "No model calls yet.";
      this.show(usage);
    } catch (err) {
      this.status.textContent = `Could not load the usage: ${err.message}`;
    }
  }

  show(usage) {
    const t = usage.totals;
    this.body.hidden = false;
    this.totals.replaceChildren(
      total("Calls", count(t.calls), "calls"),
      total("Tokens", count(t.totalTokens), "tokens",
        `${count(t.promptTokens)} prompt · ${count(t.completionTokens)} completion`),
      total("Cost", dollars(t.costUsd), "cost"));
    this.agents.replaceChildren(...bars(usage.byAgent, (a) => ({
      key: { agentId: a.agentId || "" },
      label: a.agentId ? this.ctx.agents.get(a.agentId)?.displayName || a.agentId : "No agent",
      detail: `${count(a.promptTokens)} prompt + ${count(a.completionTokens)} completion`,
    }), "No agent has called a model yet."));
    this.runs.replaceChildren(...bars(usage.byRun, (r) => ({
      key: { runId: r.runId },
      label: r.title || `Run …${r.runId.slice(-6)}`,
    }), "No run has called a model yet."));
    this.models.replaceChildren(...(usage.byModel.length
      ? usage.byModel.map((m) => h("li.usage-model", { dataset: { provider: m.provider, model: m.model } },
        h("code", {}, `${m.provider}:${m.model}`),
        h("span", {}, `${count(m.totalTokens)} tokens · ${dollars(m.costUsd)} · ${calls(m.calls)}`)))
      : [h("li.usage-empty", {}, "No model has been called yet.")]));
  }
}

function total(term, value, name, more) {
  return h("div.usage-total", { dataset: { total: name } },
    h("dt", {}, term),
    h("dd", {}, h("span.usage-total-value", {}, value), more && h("span.usage-total-more", {}, more)));
}

/** One row per item: its name, a bar as long as its share of the largest, its numbers. */
function bars(items, describe, empty) {
  if (!items.length) return [h("li.usage-empty", {}, empty)];
  const most = Math.max(1, ...items.map((i) => i.totalTokens));
  return items.map((item) => {
    const { key, label, detail } = describe(item);
    const bar = h("span.usage-bar-fill");
    bar.style.width = `${Math.max(item.totalTokens ? 1 : 0, (item.totalTokens / most) * 100)}%`;
    return h("li.usage-bar", { dataset: { ...key, tokens: String(item.totalTokens) } },
      h("span.usage-bar-label", {}, label),
      h("span.usage-bar-track", { "aria-hidden": "true" }, bar),
      h("span.usage-bar-numbers", { title: detail || null },
        h("span.usage-tokens", {}, `${count(item.totalTokens)} tokens`),
        ` · ${dollars(item.costUsd)} · ${calls(item.calls)}`));
  });
}
