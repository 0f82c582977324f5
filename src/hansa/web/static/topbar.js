// The top context bar: tenant, project switcher ("Cross project" included), conversation
// picker and "New conversation".

import { dayTime, h } from "./dom.js";

const CROSS = "";

export class TopBar {
  constructor(els, handlers) {
    this.els = els; // {tenant, project, conversation, newButton, connection}
    this.projects = [];
    els.project.addEventListener("change", () => handlers.project(els.project.value || null));
    els.conversation.addEventListener("change", () => handlers.conversation(els.conversation.value || null));
    els.newButton.addEventListener("click", () => handlers.newConversation());
  }

  tenant(name) {
    this.els.tenant.textContent = name;
  }

  setProjects(projects, selected) {
    this.projects = projects;
    this.els.project.replaceChildren(h("option", { value: CROSS }, "Cross project"),
      ...projects.map((p) => h("option", { value: p.id }, p.domain ? `${p.name} (${p.domain})` : p.name)));
    this.els.project.value = selected || CROSS;
  }

  setProject(id) {
    this.els.project.value = id || CROSS;
  }

  projectName(id) {
    return id ? this.projects.find((p) => p.id === id)?.name || "Project" : "Cross project";
  }

  setConversations(conversations, selected) {
    this.els.conversation.replaceChildren(h("option", { value: "" }, "New conversation"),
      ...conversations.map((c) => h("option", { value: c.id },
        [c.title, this.projectName(c.projectId), dayTime(c.updatedAt || c.createdAt)]
          .filter(Boolean).join(" · "))));
    this.setConversation(selected);
  }

  setConversation(id) {
    const known = [...this.els.conversation.options].some((o) => o.value === (id || ""));
    if (id && !known) this.els.conversation.append(h("option", { value: id }, "This conversation"));
    this.els.conversation.value = id || "";
  }

  connection(state) {
    const text = { open: "Live", reconnecting: "Reconnecting…", closed: "", draft: "" }[state] ?? "";
    this.els.connection.textContent = text;
    this.els.connection.dataset.state = state;
  }
}
