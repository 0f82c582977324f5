// Signing in with an API key, when the server has keys (outside local mode).
//
// The key goes to POST /api/session once; the server keeps it in an HttpOnly, SameSite=Strict
// cookie that no script (this one included) can read, and every later request carries it.

import { api, ApiError } from "./api.js";
import { h } from "./dom.js";

/** True when the server wants a key this browser has not given (GET /api/me answers 401). */
export async function needsKey() {
  try {
    await api.me();
    return false;
  } catch (err) {
    return err instanceof ApiError && err.status === 401;
  }
}

/** Ask for a key until the server takes one, then load the panel again with its cookie. */
export function askForKey() {
  const input = h("input", {
    id: "signin-key",
    type: "password", autocomplete: "off", spellcheck: "false", required: true,
    placeholder: "hk_…", "aria-describedby": "signin-help",
  });
  const error = h("p.card-error", { role: "alert", hidden: true });
  const button = h("button.primary", { type: "submit" }, "Sign in");
  const form = h("form.signin-form", { method: "dialog" },
    h("div.field", {}, h("label", { for: "signin-key" }, "API key"), input),
    error,
    h("div.dialog-actions", {}, button));
  const dialog = h("dialog.confirm.signin", { "aria-labelledby": "signin-title" },
    h("h2", { id: "signin-title" }, "This Hansa server needs an API key"),
    h("p", { id: "signin-help" },
      "Paste a key from your administrator (hansa keys create). ",
      "It is kept in a cookie that scripts cannot read; you will not be asked again."),
    form);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    button.disabled = true;
    error.hidden = true;
    try {
      await api.openSession(input.value.trim());
      location.reload();
    } catch (err) {
      error.textContent = err instanceof ApiError && err.status === 401
        ? "That key is not valid (unknown or revoked)."
        : `Could not sign in: ${err.message}`;
      error.hidden = false;
      button.disabled = false;
      input.select();
    }
  });
  dialog.addEventListener("cancel", (e) => e.preventDefault()); // nothing works without a key
  document.body.append(dialog);
  dialog.showModal();
  input.focus();
}
