// The agent list: avatars, names and short labels; Hans first and selected by default.
// A radio group (arrow keys move, Enter/Space/click select) whose tooltips show the role
// summary and example prompts. Selecting sets the active agent for the next message.

import { avatar, h } from "./dom.js";

/** "Growth Lead Dana" with role "Growth Lead" -> "Dana". */
export function shortName(agent) {
  const name = agent.displayName || agent.id;
  return agent.role && name.startsWith(agent.role) ? name.slice(agent.role.length).trim() || name : name;
}

export class AgentList {
  constructor(root, onSelect) {
    this.root = root;
    this.onSelect = onSelect;
    this.buttons = new Map();
    this.selected = null;
    root.addEventListener("keydown", (e) => this.keydown(e));
  }

  render(agents, selectedId) {
    const visible = agents.filter((a) => a.visible !== false)
      .sort((a, b) => (a.id === "chief" ? -1 : b.id === "chief" ? 1 : (a.ordering ?? 0) - (b.ordering ?? 0)));
    this.root.replaceChildren(...visible.map((agent) => this.item(agent)));
    this.select(selectedId || visible[0]?.id, false);
  }

  item(agent) {
    const tipId = `tip-${agent.id}`;
    const tip = h("div.tooltip", { id: tipId, role: "tooltip", hidden: true },
      h("strong", {}, agent.displayName), agent.role && h("span.tip-role", {}, agent.role),
      h("p", {}, agent.roleSummary || ""),
      agent.examplePrompts?.length && h("p.tip-examples-title", {}, "Try:"),
      agent.examplePrompts?.length && h("ul", {}, agent.examplePrompts.map((p) => h("li", {}, `“${p}”`))));
    const button = h("button.agent", {
      type: "button",
      role: "radio",
      "aria-checked": "false",
      "aria-describedby": tipId,
      tabindex: "-1",
      dataset: { agent: agent.id },
      onclick: () => this.select(agent.id, true),
      onmouseenter: () => this.tip(button, tip, true),
      onmouseleave: () => this.tip(button, tip, false),
      onfocus: () => this.tip(button, tip, true),
      onblur: () => this.tip(button, tip, false),
    }, avatar(agent), h("span.agent-text", {}, h("span.agent-name", {}, shortName(agent)),
      h("span.agent-role", {}, agent.role || agent.category || "")));
    const role = agent.role && !agent.displayName.startsWith(agent.role) ? `, ${agent.role}` : "";
    button.setAttribute("aria-label", `${agent.displayName}${role}`);
    this.buttons.set(agent.id, button);
    return h("li", {}, button, tip);
  }

  tip(button, tip, show) {
    if (!show) {
      tip.hidden = true;
      return;
    }
    tip.hidden = false;
    const r = button.getBoundingClientRect();
    const wide = window.innerWidth > 720;
    const left = wide ? r.right + 8 : Math.min(r.left, window.innerWidth - tip.offsetWidth - 8);
    const top = wide ? Math.min(r.top, window.innerHeight - tip.offsetHeight - 8) : r.bottom + 6;
    tip.style.left = `${Math.max(8, left)}px`;
    tip.style.top = `${Math.max(8, top)}px`;
  }

  select(id, explicit) {
    if (!this.buttons.has(id)) return;
    for (const [key, button] of this.buttons) {
      const on = key === id;
      button.setAttribute("aria-checked", String(on));
      button.tabIndex = on ? 0 : -1;
      button.classList.toggle("selected", on);
    }
    this.selected = id;
    this.onSelect(id, explicit);
  }

  keydown(e) {
    const keys = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, Home: "first", End: "last" };
    if (e.key === "Escape") {
      for (const tip of this.root.querySelectorAll(".tooltip")) tip.hidden = true;
      return;
    }
    if (!(e.key in keys)) return;
    e.preventDefault();
    const ids = [...this.buttons.keys()];
    const at = ids.indexOf(document.activeElement?.dataset?.agent ?? this.selected);
    const step = keys[e.key];
    const next = step === "first" ? 0
      : step === "last" ? ids.length - 1
        : (at + step + ids.length) % ids.length;
    this.select(ids[next], true);
    this.buttons.get(ids[next]).focus();
  }
}
