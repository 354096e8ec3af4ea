// Settings → Keys: the scoped API keys of this server (`/api/keys`, the admin's alone). Each key reads,
// or reads and writes, the folders it names (or every folder); a new key's secret is shown once, here,
// with a copy button, and is stored nowhere (the server keeps its SHA-256 only). Revoking a key stops
// it at once. OAuth connections (Claude.ai and other hosted clients) are keys too, with an expiry.

import { api } from "./api.js";
import { copyText } from "./clipboard.js";
import { fmtDate, h, mount, notice, spinner } from "./dom.js";
import { confirmDialog, toast, toastError } from "./dialogs.js";
import { reload, routes } from "./router.js";
import { state } from "./state.js";

function page(...children) {
  return h(
    "div",
    { class: "page keys-page" },
    h("p", {}, h("a", { href: routes.settings() }, "← Settings")),
    h("h1", { tabindex: "-1" }, "Keys"),
    ...children,
  );
}

export async function renderKeys(main, _route, { signal }) {
  mount(main, page(spinner()));
  let answer;
  try {
    answer = await api.keys();
  } catch (err) {
    if (err.name !== "AbortError") {
      const message =
        err.status === 403 ? "Only the admin token (RAGDOWN_TOKEN) manages keys." : err.message;
      mount(main, page(notice("error", message)));
    }
    return {};
  }
  if (signal.aborted) return {};
  const made = h("div", { id: "new-key", "aria-live": "polite" });
  mount(
    main,
    page(
      h(
        "p",
        { class: "lead" },
        "A key lets an agent or a person use this server without the admin token: it reads, or reads and ",
        "writes, only the folders it names. Other folders do not exist for it. Clients send it as ",
        h("code", {}, "Authorization: Bearer <key>"),
        ". The same keys are managed with ",
        h("code", {}, "ragdown keys create | list | revoke"),
        ".",
      ),
      made,
      createForm(made),
      h("h2", {}, "Keys"),
      keysTable(answer.keys || []),
    ),
  );
  return {};
}

function keysTable(keys) {
  if (!keys.length) return h("p", { class: "empty" }, "No keys yet.");
  return h(
    "table",
    { class: "data-table", id: "keys-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Name", "Role", "Folders", "Kind", "Created", "Expires", ""].map((title) => h("th", {}, title)),
      ),
    ),
    h(
      "tbody",
      {},
      keys.map((key) =>
        h(
          "tr",
          { dataset: { key: key.id } },
          h("td", {}, key.name),
          h("td", {}, key.role),
          h("td", {}, key.folders === null ? "every folder" : key.folders.join(", ")),
          h("td", {}, key.kind === "oauth" ? `OAuth${key.client ? `: ${key.client}` : ""}` : "key"),
          h("td", {}, fmtDate(key.created_at * 1000)),
          h(
            "td",
            {},
            key.expires_at ? fmtDate(key.expires_at * 1000) : "never",
            key.expired ? " (expired)" : "",
          ),
          h(
            "td",
            {},
            h(
              "button",
              { type: "button", class: "small danger", onclick: () => revoke(key) },
              "Revoke",
            ),
          ),
        ),
      ),
    ),
  );
}

function createForm(made) {
  const name = h("input", { id: "key-name", type: "text", required: true, maxlength: "100", autocomplete: "off" });
  const role = h(
    "select",
    { id: "key-role" },
    h("option", { value: "read" }, "read"),
    h("option", { value: "write" }, "read and write"),
  );
  // As the CLI's --expires-days: empty is a key that never expires.
  const expires = h("input", {
    id: "key-expires",
    type: "number",
    min: "1",
    max: "3650",
    step: "1",
    placeholder: "never",
    inputmode: "numeric",
  });
  const every = h("input", { id: "key-all", type: "checkbox" });
  const boxes = state.folders.map((folder) =>
    h("input", { type: "checkbox", value: folder.name, dataset: { folder: folder.name } }),
  );
  const error = h("p", { class: "field-error", role: "alert", hidden: true });
  const folderList = h(
    "div",
    { class: "key-folders", id: "key-folders" },
    boxes.map((box) => h("label", { class: "check" }, box, " ", box.value)),
  );
  every.addEventListener("change", () => {
    for (const box of boxes) box.disabled = every.checked;
  });
  return h(
    "form",
    {
      class: "section",
      id: "key-form",
      onsubmit: async (event) => {
        event.preventDefault();
        error.hidden = true;
        const folders = every.checked ? null : boxes.filter((box) => box.checked).map((box) => box.value);
        if (folders !== null && !folders.length) {
          error.textContent = "Pick at least one folder, or every folder.";
          error.hidden = false;
          return;
        }
        const days = expires.value.trim();
        if (days && !(Number.isInteger(Number(days)) && Number(days) >= 1 && Number(days) <= 3650)) {
          error.textContent = "Expires after: give a whole number of days from 1 to 3650, or leave it empty.";
          error.hidden = false;
          expires.focus();
          return;
        }
        const expiresAt = days ? Math.floor(Date.now() / 1000) + Number(days) * 86400 : undefined;
        try {
          const answer = await api.createKey({
            name: name.value.trim(),
            folders,
            role: role.value,
            expires_at: expiresAt,
          });
          showSecret(made, answer.key, answer.secret);
          name.value = "";
          expires.value = "";
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        }
      },
    },
    h("h2", {}, "New key"),
    h("label", { class: "field", for: "key-name" }, h("span", { class: "field-label" }, "Name"), name),
    h("label", { class: "field", for: "key-role" }, h("span", { class: "field-label" }, "Role"), role),
    h(
      "label",
      { class: "field", for: "key-expires" },
      h("span", { class: "field-label" }, "Expires after (days)"),
      expires,
      h("span", { class: "field-help" }, "Leave it empty for a key that never expires."),
    ),
    h(
      "fieldset",
      { class: "field" },
      h("legend", { class: "field-label" }, "Folders"),
      h("label", { class: "check" }, every, " every folder (those made later too)"),
      folderList,
    ),
    error,
    h("button", { type: "submit", id: "create-key" }, "Create key"),
  );
}

function showSecret(host, key, secret) {
  const status = h("span", { class: "copy-status", role: "status" });
  mount(
    host,
    notice(
      "success",
      h("strong", {}, `Key ${key.name} created. `),
      "Copy its secret now: it is shown this once and stored nowhere.",
      h(
        "div",
        { class: "snippet" },
        h(
          "div",
          { class: "snippet-head" },
          h("span", { class: "snippet-label" }, "Secret"),
          h(
            "button",
            {
              type: "button",
              class: "small",
              id: "copy-secret",
              onclick: async () => {
                const copied = await copyText(secret);
                status.textContent = copied ? "Copied" : "Select and copy it by hand";
              },
            },
            "Copy",
          ),
          status,
        ),
        h("pre", { class: "snippet-text", id: "key-secret", tabindex: "0" }, secret),
      ),
      h("button", { type: "button", class: "small", onclick: () => reload() }, "Done: show the list"),
    ),
  );
  document.getElementById("key-secret")?.focus();
}

async function revoke(key) {
  const sure = await confirmDialog({
    title: `Revoke ${key.name}?`,
    message: "Whoever uses it is refused from now on. This cannot be undone: make a new key instead.",
    ok: "Revoke",
    danger: true,
  });
  if (!sure) return;
  try {
    await api.revokeKey(key.id);
    toast(`Key ${key.name} revoked.`, "success");
    reload();
  } catch (err) {
    toastError(err);
  }
}
