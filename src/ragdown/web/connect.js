// "Copy MCP config": the `claude mcp add` line and the JSON `mcpServers` entry for one folder.

import { getToken } from "./api.js";
import { copyText } from "./clipboard.js";
import { h } from "./dom.js";
import { toast } from "./dialogs.js";

/** The endpoint URL of a folder: this page's origin plus the folder's `mcp_path`. */
export function endpointUrl(folder, origin = window.location.origin) {
  const path = folder.mcp_path || `/mcp/${encodeURIComponent(folder.name)}`;
  return `${origin}${path}`;
}

/** `{ command, json }` for a folder; the Authorization parts only when the server needs a token. */
export function mcpConfig(folder, { authRequired, token = getToken(), origin = window.location.origin }) {
  const name = `ragdown-${folder.name}`;
  const url = endpointUrl(folder, origin);
  const header = `Authorization: Bearer ${token || "<RAGDOWN_TOKEN>"}`;
  const command = `claude mcp add --transport http ${shellQuote(name)} ${shellQuote(url)}${
    authRequired ? ` --header ${shellQuote(header)}` : ""
  }`;
  const server = { type: "http", url };
  if (authRequired) server.headers = { Authorization: `Bearer ${token || "<RAGDOWN_TOKEN>"}` };
  const json = JSON.stringify({ mcpServers: { [name]: server } }, null, 2);
  return { command, json };
}

/** Double quotes when the word needs quoting (as the README's line does for the header). */
function shellQuote(word) {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  return `"${word.replace(/(["\\$`])/g, "\\$1")}"`;
}

/** The two snippets, each shown in full with its own Copy button. */
export function mcpConfigBlock(folder, { authRequired }) {
  const { command, json } = mcpConfig(folder, { authRequired });
  return h(
    "div",
    { class: "mcp-config" },
    snippet("Claude Code", command, "mcp-command"),
    snippet("JSON (mcpServers)", json, "mcp-json"),
    authRequired
      ? h(
          "p",
          { class: "field-help" },
          "Both hold your token: paste them only where you would keep the token itself.",
        )
      : null,
  );
}

function snippet(label, text, id) {
  const status = h("span", { class: "copy-status", role: "status" });
  return h(
    "div",
    { class: "snippet" },
    h(
      "div",
      { class: "snippet-head" },
      h("span", { class: "snippet-label" }, label),
      h(
        "button",
        {
          type: "button",
          class: "small",
          dataset: { copy: id },
          onclick: async () => {
            const copied = await copyText(text);
            status.textContent = copied ? "Copied" : "Select and copy it by hand";
            if (!copied) toast("The browser did not allow copying: select the text and copy it.", "error");
            setTimeout(() => {
              status.textContent = "";
            }, 2500);
          },
        },
        "Copy",
      ),
      status,
    ),
    h("pre", { class: "snippet-text", id, tabindex: "0" }, text),
  );
}
