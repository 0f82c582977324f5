// A side sheet: a modal dialog with its title, Refresh and Close, an intro line and a status
// line above its body. The rules, the handoff queue and the usage view are side sheets.

import { h } from "./dom.js";

/**
 * @param {object} spec {className, titleId, title, closeLabel, intro, load: () => Promise}
 * @param {...Node} body what the sheet shows under its status line
 * @returns {{el: HTMLDialogElement, status: HTMLElement, open: () => Promise}}
 */
export function sheet(spec, ...body) {
  const status = h("p.sheet-status", { role: "status" });
  const el = h(`dialog.sheet.${spec.className}`, { "aria-labelledby": spec.titleId },
    h("header.sheet-head", {},
      h("h2", { id: spec.titleId }, spec.title),
      h("button.small", { type: "button", onclick: () => spec.load() }, "Refresh"),
      h("button.icon-button", { type: "button", "aria-label": spec.closeLabel,
        onclick: () => el.close() }, "✕")),
    h("p.sheet-intro", {}, spec.intro),
    ...body.slice(0, -1), status, body[body.length - 1]);
  document.body.append(el);
  const open = () => {
    if (!el.open) el.showModal();
    return spec.load();
  };
  return { el, status, open };
}
