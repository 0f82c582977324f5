// A graph's run drawn as its graph: one box per node (its id, its type, its live status),
// laid out in layers (a node's layer is the longest path to it from a root), with its edges
// drawn between the boxes. The boxes are a list that says everything in text, edges
// included ("after check, when true"); the SVG lines only repeat it for the eye.

import { h, uid } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const TYPE_NAMES = { "wait.durable": "wait" };

/** Whether a run came from a graph (its metadata says so, or its tasks carry node ids). */
export function isGraphRun(run) {
  return Boolean(run.metadata?.graph) || [...run.tasks.values()].some((t) => t.nodeId);
}

export class GraphView {
  /**
   * @param {object} opts {statusText: (task) => string, confirm: (task) => void}
   */
  constructor({ statusText, confirm }) {
    this.statusText = statusText;
    this.confirm = confirm;
    this.shape = ""; // the nodes and edges the boxes were built for
    this.boxes = new Map(); // node id -> {el, badge, note, action, task}
    this.paths = []; // [{edge, path, label}]
    this.marker = uid("arrow");
    this.svg = svgEl("svg", { class: "graph-edges", "aria-hidden": "true", focusable: "false" });
    this.list = h("ol.graph-nodes", { "aria-label": "Graph nodes" });
    this.el = h("div.graph-view", {}, this.svg, this.list);
    new ResizeObserver(() => this.draw()).observe(this.list);
  }

  update(run) {
    const { nodes, edges } = graphOf(run);
    const shape = JSON.stringify([[...nodes.keys()], edges]);
    if (shape !== this.shape) {
      this.shape = shape;
      this.build(nodes, edges);
    }
    for (const [id, task] of nodes) this.updateBox(this.boxes.get(id), task);
    this.draw();
  }

  build(nodes, edges) {
    const layer = layers(nodes, edges);
    const rows = [];
    for (const id of nodes.keys()) (rows[layer.get(id)] ||= []).push(id);
    const width = Math.max(1, ...rows.map((r) => r.length));
    this.list.style.gridTemplateColumns = `repeat(${2 * width}, minmax(0, 1fr))`;
    this.boxes.clear();
    const items = [];
    rows.forEach((row, r) => row.forEach((id, i) => {
      const into = edges.filter((e) => e.to === id)
        .map((e) => (e.when ? `${e.from} when ${e.when}` : e.from));
      const box = {
        badge: h("span.badge"),
        note: h("span.graph-node-note"),
        action: h("div.graph-node-action"),
      };
      box.el = h("li.graph-node", {
        dataset: { node: id },
        style: { gridRow: String(r + 1), gridColumn: `${width - row.length + 2 * i + 1} / span 2` },
      },
      h("div.graph-node-head", {}, h("code.graph-node-id", {}, id), box.badge),
      h("span.graph-node-type", {}, typeName(nodes.get(id).taskType)),
      into.length ? h("span.visually-hidden", {}, `, after ${into.join(", ")}`) : null,
      box.note, box.action);
      this.boxes.set(id, box);
      items.push(box.el);
    }));
    this.list.replaceChildren(...items);
    const arrow = svgEl("marker", {
      id: this.marker, viewBox: "0 0 8 8", refX: "7", refY: "4",
      markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse",
    });
    arrow.append(svgEl("polygon", { points: "0,0 8,4 0,8" }));
    const defs = svgEl("defs", {});
    defs.append(arrow);
    this.paths = edges.map((edge) => ({
      edge,
      path: svgEl("path", { class: "graph-edge", "marker-end": `url(#${this.marker})` }),
      label: edge.when ? svgEl("text", { class: "graph-edge-label" }, edge.when) : null,
    }));
    this.svg.replaceChildren(defs, ...this.paths.flatMap((p) => [p.path, p.label].filter(Boolean)));
  }

  updateBox(box, task) {
    box.task = task;
    box.el.dataset.status = task.status;
    box.badge.dataset.status = task.status;
    box.badge.textContent = this.statusText(task);
    const error = task.status === "failed" && task.error;
    box.note.textContent = error ? (typeof error === "string" ? error : error.message || "Failed") : "";
    box.note.hidden = !error;
    const needsConsent = task.status === "awaiting_confirmation";
    if (needsConsent && !box.confirm) {
      box.confirm = h("button.primary.small", {
        type: "button",
        "aria-label": `Review and confirm: ${task.nodeId}`,
        onclick: () => this.confirm(box.task),
      }, "Review and confirm");
      box.action.append(box.confirm);
    } else if (!needsConsent && box.confirm) {
      box.confirm.remove();
      box.confirm = null;
    }
  }

  /** Lay each edge from the bottom of its source's box to the top of its target's. */
  draw() {
    if (!this.list.offsetWidth) return; // hidden (a collapsed card): drawn when shown
    for (const { edge, path, label } of this.paths) {
      const from = this.boxes.get(edge.from)?.el;
      const to = this.boxes.get(edge.to)?.el;
      if (!from || !to) continue;
      const x1 = from.offsetLeft + from.offsetWidth / 2;
      const y1 = from.offsetTop + from.offsetHeight;
      const x2 = to.offsetLeft + to.offsetWidth / 2;
      const y2 = to.offsetTop;
      const bend = Math.max(12, (y2 - y1) / 2);
      path.setAttribute("d", `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2 - 1}`);
      path.dataset.status = to.dataset.status || "";
      if (label) {
        label.setAttribute("x", String((x1 + x2) / 2 + 4));
        label.setAttribute("y", String((y1 + y2) / 2 + 4));
      }
    }
  }
}

/** The run's nodes (node id -> task, in the run's order) and its edges between them. */
function graphOf(run) {
  const tasks = [...run.tasks.values()].filter((t) => t.nodeId)
    .sort((a, b) => (a.sequenceOrder ?? a.order) - (b.sequenceOrder ?? b.order));
  const nodes = new Map(tasks.map((t) => [t.nodeId, t]));
  let edges = run.metadata?.edges;
  if (!Array.isArray(edges)) { // no edges recorded: the tasks' dependencies are the edges
    const byTask = new Map(tasks.map((t) => [t.id, t.nodeId]));
    edges = tasks.flatMap((t) => (t.dependsOn || []).map((d) => ({ from: byTask.get(d), to: t.nodeId })));
  }
  edges = edges.filter((e) => nodes.has(e.from) && nodes.has(e.to))
    .map((e) => ({ from: e.from, to: e.to, when: e.when ?? null }));
  return { nodes, edges };
}

/** Each node's layer: 0 for a root, else one more than its deepest predecessor's. */
function layers(nodes, edges) {
  const before = new Map([...nodes.keys()].map((id) => [id, []]));
  for (const e of edges) before.get(e.to).push(e.from);
  const layer = new Map();
  const depth = (id, seen) => {
    if (layer.has(id)) return layer.get(id);
    if (seen.has(id)) return 0; // a cycle cannot be saved; never loop on one
    seen.add(id);
    const d = Math.max(-1, ...before.get(id).map((p) => depth(p, seen))) + 1;
    layer.set(id, d);
    return d;
  };
  for (const id of nodes.keys()) depth(id, new Set());
  return layer;
}

function typeName(taskType) {
  return TYPE_NAMES[taskType] || taskType || "";
}

function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  if (text) el.textContent = text;
  return el;
}
