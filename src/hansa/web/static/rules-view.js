// The rules list (issue 17): each rule of the tenant with its trigger and priority, a switch
// that turns it on or off (PATCH /api/rules/{id} {enabled}), when it last fired, and on
// demand its last firings (GET /api/rules/{id}/firings), each opening its conversation.
// The routing rules of hansa.toml are listed too, read-only.

import { api } from "./api.js";
import { dayTime, h, uid } from "./dom.js";
import { sheet } from "./sheet.js";

export class RulesDialog {
  /**
   * @param {object} ctx {openConversation(id), conversationName(id)}
   */
  constructor(ctx) {
    this.ctx = ctx;
    this.list = h("ul.rule-list", { "aria-labelledby": "rules-title" });
    ({ el: this.el, status: this.status, open: this.open } = sheet({
      className: "rules-view", titleId: "rules-title", title: "Rules",
      closeLabel: "Close the rules",
      intro: "What happens when something happens in a conversation, highest priority first.",
      load: () => this.load(),
    }, this.list));
  }

  async load() {
    this.status.textContent = "Loading…";
    try {
      const rules = await api.rules();
      this.list.replaceChildren(...rules.map((r) => this.row(r)));
      this.status.textContent = rules.length ? "" : "No rules yet: create them with POST /api/rules.";
    } catch (err) {
      this.status.textContent = `Could not load the rules: ${err.message}`;
    }
  }

  row(rule) {
    const readOnly = rule.source === "config";
    const nameId = uid("rule");
    const error = h("p.card-error", { role: "alert", hidden: true });
    const last = h("span.rule-last");
    const firings = h("ol.firings", {
      id: uid("firings"), hidden: true, "aria-label": `Last firings of ${rule.name}`,
    });
    const li = h("li.rule", { dataset: { ruleId: rule.id } });
    const toggle = h("input", {
      type: "checkbox", role: "switch", "aria-labelledby": nameId,
      "aria-describedby": readOnly ? `${nameId}-ro` : null, disabled: readOnly,
      onchange: () => this.setEnabled(rule, toggle, show, error),
    });
    const show = (current) => {
      toggle.checked = current.enabled;
      li.dataset.enabled = String(current.enabled);
      last.textContent = current.lastFiredAt ? `Last fired ${dayTime(current.lastFiredAt)}` : "Never fired";
    };
    show(rule);
    const more = h("button.link-button", {
      type: "button", "aria-expanded": "false", "aria-controls": firings.id,
      onclick: () => this.toggleFirings(rule, more, firings),
    }, "Last firings");
    li.append(
      h("div.rule-head", {},
        h("label.switch", { title: readOnly ? "Routing rules of hansa.toml are read-only" : null },
          toggle),
        h("span.rule-name", { id: nameId }, rule.name),
        readOnly && h("span.pill", { id: `${nameId}-ro` }, "hansa.toml, read-only")),
      h("div.rule-meta", {},
        h("code.rule-trigger", {}, rule.trigger),
        h("span", {}, `priority ${rule.priority}`),
        h("span", {}, actionsText(rule.actions)),
        last, readOnly ? null : more),
      error, firings);
    return li;
  }

  async setEnabled(rule, toggle, show, error) {
    const wanted = toggle.checked;
    toggle.disabled = true;
    error.hidden = true;
    try {
      const changed = await api.changeRule(rule.id, { enabled: wanted });
      Object.assign(rule, changed);
      show(rule);
    } catch (err) {
      toggle.checked = !wanted;
      error.textContent = `Could not ${wanted ? "enable" : "disable"} the rule: ${err.message}`;
      error.hidden = false;
    } finally {
      toggle.disabled = false;
    }
  }

  async toggleFirings(rule, button, list) {
    const opening = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(opening));
    list.hidden = !opening;
    if (!opening) return;
    list.replaceChildren(h("li.firing-empty", {}, "Loading…"));
    try {
      const found = await api.ruleFirings(rule.id);
      list.replaceChildren(...(found.length
        ? found.map((f) => this.firing(f))
        : [h("li.firing-empty", {}, "This rule has not fired yet.")]));
    } catch (err) {
      list.replaceChildren(h("li.firing-empty", {}, `Could not load the firings: ${err.message}`));
    }
  }

  firing(f) {
    const where = f.conversationId
      ? h("button.link-button", {
        type: "button",
        onclick: () => {
          this.el.close();
          this.ctx.openConversation(f.conversationId);
        },
      }, this.ctx.conversationName(f.conversationId))
      : h("span", {}, "no conversation");
    return h("li.firing", { dataset: { conversationId: f.conversationId || "" } },
      h("time", { datetime: f.createdAt }, dayTime(f.createdAt)),
      h("code", {}, f.trigger), where,
      h("span.firing-actions", {}, actionsText(f.actions)));
  }
}

function actionsText(actions) {
  const types = (actions || []).map((a) => a.type);
  return types.length ? `→ ${types.join(", ")}` : "";
}
