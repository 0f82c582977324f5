// Tiny DOM helpers: build elements without innerHTML (text is always text).

/**
 * h("button.primary", {onclick, "aria-label": "Send"}, "Send")
 * The tag may carry classes after dots; attributes starting with "on" become listeners;
 * children are nodes, strings (as text) or arrays; null/false children are skipped.
 */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "style" && typeof value === "object") {
      Object.assign(el.style, value);
    } else if (key === "class") {
      el.className = [el.className, value].filter(Boolean).join(" ");
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

let counter = 0;

/** A unique element id, for aria-controls / aria-labelledby pairs. */
export function uid(prefix = "h") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** The avatar circle of an agent: initials on its colour. */
export function avatar(agent, size = "") {
  const initials = agent?.avatar?.initials || (agent?.displayName || "?").slice(0, 2).toUpperCase();
  const color = agent?.avatar?.color || "#64748b";
  return h(`span.avatar${size ? "." + size : ""}`, { style: { background: color }, "aria-hidden": "true" },
    initials);
}

// Formatters are costly to build; toLocale*String builds one per call.
const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const DAY_TIME = new Intl.DateTimeFormat(undefined, {
  month: "short", day: "numeric", hour: "numeric", minute: "2-digit",
});

function format(formatter, iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : formatter.format(d);
}

/** "14:05" for an ISO timestamp (local time). */
export const clock = (iso) => format(TIME, iso);

/** "Nov 22, 1:31 PM" for an ISO timestamp (local time). */
export const dayTime = (iso) => format(DAY_TIME, iso);
