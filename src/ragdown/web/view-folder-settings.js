// A folder's settings (its `.ragdown.json`): title, the MCP switch, the hook's defaults, Copy MCP
// config, rename and delete. Under RAGDOWN_READ_ONLY the settings still change; rename and delete
// do not.

import { api } from "./api.js";
import { mcpConfigBlock } from "./connect.js";
import { h, mount, notice } from "./dom.js";
import { toast, toastError } from "./dialogs.js";
import { navigate, routes } from "./router.js";
import { authRequired, folderByName, readOnly, refreshFolders, state, updateFolder } from "./state.js";
import { HOOK_FIELDS, markInvalid, minScoreWarning, parseSetting, settingControl } from "./view-settings.js";

export async function renderFolderSettings(main, route) {
  let folder = folderByName(route.folder);
  if (!folder) {
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h("h1", { tabindex: "-1" }, "No such folder"),
        notice("error", `There is no folder named ${route.folder}.`),
      ),
    );
    return {};
  }

  const draw = () => {
    folder = folderByName(folder.name) || folder;
    mount(
      main,
      h(
        "div",
        { class: "page settings-page" },
        h(
          "div",
          { class: "page-head" },
          h("h1", { tabindex: "-1" }, `${folder.title || folder.name}: settings`),
          h("a", { class: "button", href: routes.folder(folder.name) }, "Back to the folder"),
        ),
        h(
          "p",
          { class: "lead" },
          "Kept in ",
          h("code", {}, `${folder.name}/.ragdown.json`),
          ". Changes apply at once.",
        ),
        mcpSection(),
        titleSection(),
        hookSection(),
        readOnly() ? null : renameSection(),
        readOnly() ? null : deleteSection(),
      ),
    );
  };

  async function patch(body, message) {
    try {
      const answer = await api.patchFolder(folder.name, body);
      updateFolder(answer.folder, folder.name);
      folder = answer.folder;
      if (message) toast(message, "success", 2500);
      return answer.folder;
    } catch (err) {
      toastError(err);
      return null;
    }
  }

  function mcpSection() {
    const toggle = h("input", {
      type: "checkbox",
      role: "switch",
      id: "mcp-switch",
      checked: Boolean(folder.mcp),
      onchange: async () => {
        toggle.disabled = true;
        const done = await patch(
          { mcp: toggle.checked },
          toggle.checked ? "MCP is on for this folder." : "MCP is off for this folder.",
        );
        if (!done) toggle.checked = !toggle.checked;
        draw();
        document.getElementById("mcp-switch")?.focus();
      },
    });
    return h(
      "section",
      { class: "section", "aria-labelledby": "mcp-heading" },
      h("h2", { id: "mcp-heading" }, "MCP"),
      h(
        "label",
        { class: "switch", for: "mcp-switch" },
        toggle,
        h("span", { class: "switch-track", "aria-hidden": "true" }),
        h("span", {}, "Serve this folder over MCP at ", h("code", {}, folder.mcp_path)),
      ),
      h(
        "p",
        { class: "field-help" },
        folder.mcp
          ? "Agents with the token can search, read and (unless read-only) write its documents."
          : "Human-only: indexed and searchable here, but the endpoint answers 404 and no hook context comes from it.",
      ),
      h("h3", {}, "Copy MCP config"),
      folder.mcp ? null : notice("info", "Turn MCP on first: until then the endpoint below answers 404."),
      mcpConfigBlock(folder, { authRequired: authRequired() }),
    );
  }

  function titleSection() {
    const input = h("input", { id: "folder-title", value: folder.title || "", placeholder: folder.name });
    return h(
      "section",
      { class: "section" },
      h("h2", {}, "Title"),
      h(
        "form",
        {
          class: "inline-form",
          onsubmit: async (event) => {
            event.preventDefault();
            await patch({ title: input.value.trim() || null }, "Title saved.");
            draw();
          },
        },
        h(
          "label",
          { class: "field", for: "folder-title" },
          h("span", { class: "field-label" }, "Shown in the web UI and the MCP server's instructions"),
          input,
        ),
        h("button", { type: "submit" }, "Save title"),
      ),
    );
  }

  function hookSection() {
    const server = (state.status && state.status.settings && state.status.settings.hook) || {};
    const own = folder.hook || {};
    const fields = HOOK_FIELDS(state.status, { folder: true });
    const inputs = fields.map((field) => {
      const input = settingControl(field, `folder-hook-${field.key}`, own[field.key], {
        placeholder:
          server[field.key] !== undefined && server[field.key] !== null
            ? `server: ${server[field.key]}`
            : "server default",
      });
      input.addEventListener("input", () => markInvalid(input, null));
      return input;
    });
    const warning = minScoreWarning(
      own.min_score,
      server.unrelated_score,
      `${folder.name}'s own minimum score`,
    );
    return h(
      "section",
      { class: "section" },
      h("h2", {}, "Hook defaults"),
      h(
        "p",
        { class: "field-help" },
        "What ragdown_context uses for this folder. Leave a value empty to inherit the server's; an argument on the call still wins.",
      ),
      warning,
      h(
        "form",
        {
          class: "grid-form",
          // The server's bounds are checked here, with a message (see view-settings.js).
          novalidate: true,
          onsubmit: async (event) => {
            event.preventDefault();
            const hook = {};
            let refused = null;
            for (const [index, field] of fields.entries()) {
              const parsed = parseSetting(field, inputs[index].value);
              markInvalid(inputs[index], parsed.error || null);
              if (parsed.error) refused = refused || { input: inputs[index], error: parsed.error };
              else hook[field.key] = parsed.value;
            }
            if (refused) {
              toast(refused.error, "error");
              refused.input.focus();
              return;
            }
            await patch({ hook }, "Hook defaults saved.");
            draw();
          },
        },
        fields.map((field, index) =>
          h(
            "label",
            { class: "field", for: `folder-hook-${field.key}` },
            h("span", { class: "field-label" }, field.label, " ", h("code", {}, field.key)),
            inputs[index],
            h("span", { class: "field-help" }, field.help),
          ),
        ),
        h("div", { class: "button-row" }, h("button", { type: "submit" }, "Save hook defaults")),
      ),
    );
  }

  function renameSection() {
    const input = h("input", { id: "folder-name", value: folder.name, spellcheck: "false" });
    return h(
      "section",
      { class: "section" },
      h("h2", {}, "Rename"),
      h(
        "form",
        {
          class: "inline-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const name = input.value.trim();
            if (!name || name === folder.name) return;
            const renamed = await patch(
              { name },
              `Renamed to ${name}. Update the MCP URLs of agents that used the old name.`,
            );
            if (renamed) {
              await refreshFolders();
              navigate(routes.folderSettings(renamed.name), { replace: true });
            }
          },
        },
        h(
          "label",
          { class: "field", for: "folder-name" },
          h(
            "span",
            { class: "field-label" },
            "Directory name (its MCP path follows it; the folder is re-indexed)",
          ),
          input,
        ),
        h("button", { type: "submit" }, "Rename"),
      ),
    );
  }

  function deleteSection() {
    const button = h(
      "button",
      { type: "submit", class: "danger", disabled: true, id: "delete-folder" },
      "Delete folder",
    );
    const input = h("input", {
      id: "delete-confirm",
      spellcheck: "false",
      autocomplete: "off",
      oninput: () => {
        button.disabled = input.value !== folder.name;
      },
    });
    return h(
      "section",
      { class: "section danger-zone" },
      h("h2", {}, "Delete folder"),
      h("p", {}, "Deletes the directory and everything in it, for good: documents, images, its settings."),
      h(
        "form",
        {
          class: "inline-form",
          onsubmit: async (event) => {
            event.preventDefault();
            if (input.value !== folder.name) return;
            try {
              await api.deleteFolder(folder.name, input.value);
              toast(`Deleted the folder ${folder.name}.`, "success");
              await refreshFolders();
              navigate(routes.home(), { replace: true });
            } catch (err) {
              toastError(err);
            }
          },
        },
        h(
          "label",
          { class: "field", for: "delete-confirm" },
          h("span", { class: "field-label" }, `Type ${folder.name} to confirm`),
          input,
        ),
        button,
      ),
    );
  }

  draw();
  return {};
}
