// The workspace entities the open conversation changed (issue 19), built from its
// `entity_patch` events: a created entity (kind and name), an update (the new name, the
// fields set), a deletion (struck through), a link between two entities. Live and replayed
// events go through the same apply(), so a reload rebuilds the view from the log. The
// `operation` event that precedes each patch says which change it was and the entity's name.
// Opening an entity shows its stored fields (GET /api/workspace/entities/{id}).

import { api } from "./api.js";
import { dayTime, h, uid } from "./dom.js";

const VALUE_CHARS = 40; // a field's value is shown shortly
const FIELDS_SHOWN = 4;
const PAST = { create: "created", update: "updated", delete: "deleted" };

/** A value in a few characters: text as is, anything else as JSON, cut with "…". */
export function shortValue(value) {
  const text = value === null || value === undefined ? "none"
    : typeof value === "string" ? value : JSON.stringify(value);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

export class EntityView {
  /** @param {HTMLElement} root the (hidden until something changed) workspace section */
  constructor(root) {
    this.root = root;
    this.count = h("span.count");
    this.list = h("ul.ws-entities", { "aria-label": "Entities this conversation changed" });
    this.links = h("ul.ws-links", { "aria-label": "Links this conversation made" });
    // Closed on a phone, where the sidebar is a strip above the conversation.
    const wide = !window.matchMedia?.("(max-width: 720px)")?.matches;
    root.append(h("details.ws-box", { open: wide },
      h("summary.ws-title", {}, h("span", { id: "workspace-title" }, "Workspace"), " ",
        this.count),
      h("p.ws-intro", {}, "What this conversation changed"),
      this.list, this.links));
    this.reset();
  }

  /** Forget everything (another conversation opens). */
  reset() {
    this.generation = (this.generation || 0) + 1; // answers to older lookups are dropped
    this.entities = new Map(); // id -> {id, kind, name, fields, change, was, row parts}
    this.edges = new Map(); // edge id -> {fromId, toId, relation, el}
    this.ops = new Map(); // entity id -> the last successful operation's {action, name, kind}
    this.looked = new Map(); // entity id -> {kind, name} of an end seen only in a link, or null
    this.list.replaceChildren();
    this.links.replaceChildren();
    this.root.hidden = true;
  }

  apply(ev) {
    const d = ev.data || {};
    if (ev.type === "operation" && d.status === "success" && d.entityId) {
      this.ops.set(d.entityId, { action: d.action, name: d.entityName, kind: d.entityType });
      return;
    }
    if (ev.type !== "entity_patch" || !d.entityId) return;
    if (d.entity === "edge") this.edge(d.entityId, d.patch || {});
    else this.entity(d.entity, d.entityId, d.patch || {});
    this.root.hidden = false;
    this.count.textContent = String(this.entities.size + this.edges.size);
  }

  entity(kind, id, patch) {
    const op = this.ops.get(id);
    this.ops.delete(id);
    let item = this.entities.get(id);
    const first = !item;
    if (!item) {
      item = this.row(id, kind || op?.kind || "entity");
      this.entities.set(id, item);
      this.list.append(item.el);
    }
    const { name, deleted, ...fields } = patch;
    if (typeof name === "string" && name !== item.name) {
      if (item.name && op?.action !== "create") item.was = item.was ?? item.name;
      item.name = name;
    } else if (!item.name && op?.name) item.name = op.name;
    if (item.was === item.name) item.was = null;
    Object.assign(item.fields, fields);
    if (deleted === true) item.change = "deleted";
    else if (deleted === false) item.change = "restored";
    else item.change = PAST[op?.action] || (first && name ? "created" : "updated");
    this.show(item);
    this.showLinks();
  }

  row(id, kind) {
    const detailId = uid("ws-detail");
    const item = {
      id, kind, name: "", was: null, fields: {}, change: "",
      nameEl: h("span.ws-name"),
      changeEl: h("span.ws-change"),
      fieldsEl: h("p.ws-fields"),
      detail: h("div.ws-detail", { id: detailId, hidden: true }),
    };
    item.button = h("button.ws-open", {
      type: "button", "aria-expanded": "false", "aria-controls": detailId,
      onclick: () => this.toggle(item),
    }, h("span.ws-kind", {}, kind), item.nameEl);
    item.el = h("li.ws-entity", { dataset: { entityId: id, kind } },
      h("div.ws-head", {}, item.button, item.changeEl), item.fieldsEl, item.detail);
    return item;
  }

  show(item) {
    item.el.dataset.state = item.change;
    item.nameEl.textContent = item.name || `…${item.id.slice(-6)}`;
    item.changeEl.textContent = item.change;
    const parts = [];
    if (item.was) parts.push(`renamed from “${item.was}”`);
    const keys = Object.keys(item.fields);
    for (const key of keys.slice(0, FIELDS_SHOWN)) parts.push(`${key}: ${shortValue(item.fields[key])}`);
    if (keys.length > FIELDS_SHOWN) parts.push(`+${keys.length - FIELDS_SHOWN} more`);
    item.fieldsEl.textContent = parts.join(" · ");
    item.fieldsEl.hidden = !parts.length;
  }

  edge(id, patch) {
    if (this.edges.has(id) || !patch.fromId || !patch.toId) return;
    const el = h("li.ws-link", { dataset: { edgeId: id } });
    this.edges.set(id, { fromId: patch.fromId, toId: patch.toId, relation: patch.relation || "", el });
    this.links.append(el);
    for (const end of [patch.fromId, patch.toId]) this.lookUp(end);
    this.showLinks();
  }

  /** Every link line again, with the names known now. */
  showLinks() {
    for (const edge of this.edges.values()) {
      edge.el.replaceChildren(this.end(edge.fromId), h("span.ws-arrow", {}, " → "),
        h("span.ws-relation", {}, edge.relation), h("span.ws-arrow", {}, " → "), this.end(edge.toId));
    }
  }

  end(id) {
    const known = this.entities.get(id) || this.looked.get(id);
    const name = known?.name || `…${id.slice(-6)}`;
    return h("span.ws-end", { dataset: { entityId: id, state: known?.change || "" }, title: known?.kind },
      name);
  }

  /** The name of an end this conversation did not change: asked for once. */
  async lookUp(id) {
    if (this.entities.has(id) || this.looked.has(id)) return;
    this.looked.set(id, null);
    const generation = this.generation;
    try {
      const found = await api.entity(id);
      if (generation !== this.generation) return;
      this.looked.set(id, { kind: found.kind, name: found.name });
      this.showLinks();
    } catch {
      // deleted or out of reach: the link keeps the short id
    }
  }

  async toggle(item) {
    const opening = item.button.getAttribute("aria-expanded") !== "true";
    item.button.setAttribute("aria-expanded", String(opening));
    item.detail.hidden = !opening;
    if (!opening) return;
    item.detail.replaceChildren(h("p.ws-note", {}, "Loading…"));
    try {
      const found = await api.entity(item.id);
      item.detail.replaceChildren(this.details(found));
    } catch (err) {
      item.detail.replaceChildren(h("p.ws-note", {}, err.status === 404
        ? "Not in the workspace now (deleted)." : `Could not load it: ${err.message}`));
    }
  }

  details(entity) {
    const data = entity.data || {};
    const rows = Object.entries(data).map(([key, value]) => [key, shortValue(value)]);
    rows.push(["links", String((entity.edges || []).length)]);
    if (entity.updatedAt) rows.push(["updated", dayTime(entity.updatedAt)]);
    return h("dl.ws-data", { "aria-label": `Fields of ${entity.name}` },
      rows.map(([key, value]) => [h("dt", {}, key), h("dd", {}, value)]));
  }
}
