// Modal dialogs on <dialog>, and toasts. Each dialog resolves a Promise; Escape cancels.

import { byId, h } from "./dom.js";

function openDialog(dialog, { cancellable = true } = {}) {
  document.body.append(dialog);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value) => {
      if (settled) return;
      settled = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(value);
    };
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      if (cancellable) finish(null);
    });
    dialog.finish = finish;
    if (cancellable) dialog.dataset.transient = "";
    dialog.showModal();
    const focus =
      dialog.querySelector("[autofocus]") || dialog.querySelector("input, textarea, button.primary, button");
    if (focus) focus.focus();
  });
}

function buttonRow(buttons) {
  return h("div", { class: "dialog-buttons" }, buttons);
}

/**
 * Asks for values: `fields` are `{ name, label, value, placeholder, type, required, help, pattern }`.
 * Resolves to `{ name: value }`, or null when cancelled. `validate(values)` may return a message.
 */
export function ask({ title, message, fields, ok = "OK", validate, danger = false }) {
  const error = h("p", { class: "dialog-error", role: "alert", hidden: true });
  const inputs = fields.map((field, index) =>
    h("input", {
      id: `ask-${field.name}`,
      name: field.name,
      type: field.type || "text",
      value: field.type === "checkbox" ? undefined : (field.value ?? ""),
      checked: field.type === "checkbox" ? Boolean(field.value) : undefined,
      placeholder: field.placeholder,
      required: field.required,
      autocomplete: field.autocomplete || "off",
      spellcheck: "false",
      autofocus: index === 0,
    }),
  );
  let dialog;
  const form = h(
    "form",
    {
      method: "dialog",
      onsubmit: (event) => {
        event.preventDefault();
        const values = Object.fromEntries(
          inputs.map((input) => [input.name, input.type === "checkbox" ? input.checked : input.value.trim()]),
        );
        const problem = validate ? validate(values) : null;
        if (problem) {
          error.textContent = problem;
          error.hidden = false;
          return;
        }
        dialog.finish(values);
      },
    },
    h("h2", {}, title),
    message ? h("p", {}, message) : null,
    fields.map((field, index) =>
      field.type === "checkbox"
        ? h("label", { class: "check", for: `ask-${field.name}` }, inputs[index], h("span", {}, field.label))
        : h(
            "label",
            { class: "field", for: `ask-${field.name}` },
            h("span", { class: "field-label" }, field.label),
            inputs[index],
            field.help ? h("span", { class: "field-help" }, field.help) : null,
          ),
    ),
    error,
    buttonRow([
      h("button", { type: "button", onclick: () => dialog.finish(null) }, "Cancel"),
      h("button", { type: "submit", class: danger ? "danger" : "primary" }, ok),
    ]),
  );
  dialog = h("dialog", { class: "dialog", "aria-label": title }, form);
  return openDialog(dialog);
}

/** Resolves true when confirmed. */
export async function confirmDialog({ title, message, ok = "OK", cancel = "Cancel", danger = false }) {
  const choice = await choose({
    title,
    message,
    choices: [
      { value: false, label: cancel },
      { value: true, label: ok, kind: danger ? "danger" : "primary" },
    ],
  });
  return choice === true;
}

/**
 * Offers buttons: `choices` are `{ value, label, kind }` (kind "primary" or "danger"). Resolves to
 * the chosen value, or null when dismissed.
 */
export function choose({ title, message, details, choices, cancellable = true, role = "dialog" }) {
  let dialog;
  const buttons = choices.map((choice) =>
    h(
      "button",
      {
        type: "button",
        class: choice.kind || undefined,
        autofocus: choice.kind === "primary",
        onclick: () => dialog.finish(choice.value),
      },
      choice.label,
    ),
  );
  dialog = h(
    "dialog",
    { class: "dialog", role, "aria-label": title },
    h("h2", {}, title),
    message ? (message instanceof Node ? message : h("p", {}, message)) : null,
    details || null,
    buttonRow(buttons),
  );
  return openDialog(dialog, { cancellable });
}

/** The token prompt: not cancellable; `check(token)` resolves true when the server accepts it. */
export function askToken({ reason, check }) {
  const input = h("input", {
    id: "token-input",
    name: "token",
    type: "password",
    autocomplete: "current-password",
    spellcheck: "false",
    required: true,
    autofocus: true,
  });
  const error = h("p", { class: "dialog-error", role: "alert", hidden: !reason }, reason || "");
  const submit = h("button", { type: "submit", class: "primary" }, "Sign in");
  let dialog;
  const form = h(
    "form",
    {
      method: "dialog",
      onsubmit: async (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        submit.disabled = true;
        error.hidden = true;
        try {
          if (await check(token)) {
            dialog.finish(token);
            return;
          }
          error.textContent = "That token was not accepted.";
        } catch (err) {
          error.textContent = err.message || String(err);
        } finally {
          submit.disabled = false;
        }
        error.hidden = false;
        input.select();
      },
    },
    h("h2", {}, "Sign in to ragdown"),
    h("p", {}, "Enter the server's access token (RAGDOWN_TOKEN). This browser keeps it until you sign out."),
    h("label", { class: "field", for: "token-input" }, h("span", { class: "field-label" }, "Token"), input),
    error,
    buttonRow([submit]),
  );
  dialog = h("dialog", { class: "dialog", "aria-label": "Sign in" }, form);
  return openDialog(dialog, { cancellable: false });
}

/**
 * The page changed: open dialogs that may be cancelled are (the sign-in one stays), and so are the
 * toasts, but for one made just now by what changed the page (a "Saved" before the editor opens the
 * document): it stays for that page, and goes at the next change.
 */
export function closeTransient() {
  for (const dialog of document.querySelectorAll("dialog[data-transient]")) dialog.finish(null);
  const now = Date.now();
  for (const item of [...byId("toasts").children]) {
    if (item.dataset.moved || now - Number(item.dataset.made || 0) > TOAST_CARRIED_MS) item.remove();
    else item.dataset.moved = "1";
  }
}

const TOAST_CARRIED_MS = 1500;

/** A short message in the corner; kind is "info", "success" or "error". */
export function toast(message, kind = "info", timeout = 4000) {
  const host = byId("toasts");
  const item = h(
    "div",
    { class: ["toast", `toast-${kind}`] },
    h("span", {}, message),
    h(
      "button",
      { type: "button", class: "icon-button", "aria-label": "Dismiss", onclick: () => item.remove() },
      "×",
    ),
  );
  item.dataset.made = String(Date.now());
  host.append(item);
  if (timeout) setTimeout(() => item.remove(), kind === "error" ? timeout * 2 : timeout);
  return item;
}

/** Why the server answered a change before its index had it (a long sync running, RAGDOWN_WRITE_WAIT
 * passed: `answer.sync.pending`), or null when the index has it. */
export function syncPending(answer) {
  const sync = answer && answer.sync;
  return sync && typeof sync.pending === "string" ? sync.pending : null;
}

/** A change's toast: `message` as a success, or, when the index has not caught up, with that said, for
 * longer. */
export function toastDone(message, answer, timeout = 4000) {
  const pending = syncPending(answer);
  if (!pending) return toast(message, "success", timeout);
  return toast(`${message} ${pending[0].toUpperCase()}${pending.slice(1)}.`, "info", 8000);
}

/** Shows an error from an API call as a toast; returns it for chaining. */
export function toastError(err, prefix = "") {
  if (err && err.name === "AbortError") return err;
  const text = err && err.message ? err.message : String(err);
  toast(prefix ? `${prefix}: ${text}` : text, "error");
  return err;
}
