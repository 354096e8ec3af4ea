// A folder's settings (its `.ragdown.json`): title, the MCP switch and its tool set, which files
// count (include / exclude patterns), the index.md upkeep, the hook's defaults, the quotas
// (folder-quota.js), Copy MCP config, rename and delete. Under RAGDOWN_READ_ONLY the settings still change; rename and delete do not.

import { api } from "./api.js";
import { mcpConfigBlock } from "./connect.js";
import { h, mount, mountNoSuchFolder, notice } from "./dom.js";
import { toast, toastDone, toastError } from "./dialogs.js";
import { navigate, routes } from "./router.js";
import {
  authRequired,
  docsChanged,
  folderByName,
  isAdmin,
  readOnly,
  refreshFolders,
  state,
  updateFolder,
} from "./state.js";
import { quotaSection } from "./folder-quota.js";
import { HOOK_FIELDS, markInvalid, minScoreWarning, parseSetting, settingControl } from "./view-settings.js";

export async function renderFolderSettings(main, route, { signal }) {
  let folder = folderByName(route.folder);
  if (!folder) {
    mountNoSuchFolder(main, route.folder);
    return {};
  }

  // A save answered after the user has gone to another page must not draw this one over it.
  const draw = () => {
    if (signal.aborted) return;
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
        isAdmin()
          ? null
          : notice("info", "Only the admin (RAGDOWN_TOKEN) changes a folder's settings: they are shown as they are."),
        mcpSection(),
        toolsetSection(),
        titleSection(),
        filesSection(),
        indexMdSection(),
        hookSection(),
        quotaSection(folder, patch, draw),
        readOnly() || !isAdmin() ? null : renameSection(),
        readOnly() || !isAdmin() ? null : deleteSection(),
      ),
    );
    if (!isAdmin()) {
      // Shown, not offered: every control the admin alone may use is off (a key would get a 403).
      const controls = ".settings-page input, .settings-page select, .settings-page textarea, .settings-page button:not([data-copy])";
      for (const control of main.querySelectorAll(controls)) {
        control.disabled = true;
      }
    }
  };

  /** Saves `body`; on a refusal, the server's message in a toast and (given a `control`) under it. */
  async function patch(body, message, control = null) {
    try {
      const answer = await api.patchFolder(folder.name, body);
      updateFolder(answer.folder, folder.name);
      folder = answer.folder;
      if (message) toast(message, "success", 2500);
      return answer.folder;
    } catch (err) {
      toastError(err);
      if (control && err && err.name !== "AbortError") {
        markInvalid(control, err.message || String(err));
        control.focus();
      }
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

  function toolsetSection() {
    const current = folder.toolset || "";
    const single = current === "" || TOOLSETS.some((set) => set.name === current);
    const choice = h(
      "select",
      {
        id: "folder-toolset-choice",
        onchange: () => {
          markInvalid(choice, null);
          markInvalid(custom, null);
          customField.hidden = choice.value !== CUSTOM;
          if (!customField.hidden) custom.focus();
        },
      },
      TOOLSETS.map((set) => h("option", { value: set.name === DEFAULT_TOOLSET ? "" : set.name }, set.label)),
      h("option", { value: CUSTOM }, "Several, comma-separated…"),
    );
    choice.value = single ? (current === DEFAULT_TOOLSET ? "" : current) : CUSTOM;
    const custom = h("input", {
      id: "folder-toolset",
      value: single ? "" : current,
      placeholder: "ragdown,markindex",
      spellcheck: "false",
      autocomplete: "off",
      oninput: () => markInvalid(custom, null),
    });
    const customField = h(
      "label",
      { class: "field", for: "folder-toolset", hidden: choice.value !== CUSTOM },
      h("span", { class: "field-label" }, "Tool sets, comma-separated"),
      custom,
    );
    return h(
      "section",
      { class: "section", "aria-labelledby": "toolset-heading" },
      h("h2", { id: "toolset-heading" }, "Tool set"),
      h(
        "p",
        { class: "field-help" },
        "The tools this folder's MCP endpoint offers: ragdown's own, or the names and shapes of another system. ",
        "A union offers several at once, unless two of them have a tool of the same name. ",
        h("code", {}, "?toolset="),
        " on an MCP URL wins over this; without it, the server's ",
        h("code", {}, "RAGDOWN_TOOLSET"),
        " (else ragdown) applies.",
      ),
      h(
        "form",
        {
          class: "inline-form",
          id: "toolset-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const usingCustom = choice.value === CUSTOM;
            const raw = usingCustom ? custom.value.trim() : choice.value;
            const control = usingCustom ? custom : choice;
            const done = await patch(
              { toolset: raw || null },
              raw ? `Tool set saved: ${raw}.` : "Tool set saved: the default.",
              control,
            );
            if (done) {
              draw();
              document.getElementById("folder-toolset-choice")?.focus();
            }
          },
        },
        h(
          "label",
          { class: "field", for: "folder-toolset-choice" },
          h("span", { class: "field-label" }, "Tools offered over MCP"),
          choice,
        ),
        customField,
        h("button", { type: "submit", id: "save-toolset" }, "Save tool set"),
      ),
    );
  }

  function filesSection() {
    const include = patternArea("folder-include", folder.include, "notes/\n*.md");
    const exclude = patternArea("folder-exclude", folder.exclude, "drafts/\n*.tmp.md");
    return h(
      "section",
      { class: "section", "aria-labelledby": "files-heading" },
      h("h2", { id: "files-heading" }, "Which files count"),
      h(
        "p",
        { class: "field-help" },
        "Patterns in .gitignore syntax, one per line; blank lines are ignored. ",
        h("code", {}, ".gitignore"),
        " files at any level, ",
        h("code", {}, ".git/info/exclude"),
        " and a ",
        h("code", {}, ".ragdownignore"),
        " at the folder root apply too.",
      ),
      h(
        "form",
        {
          class: "pattern-form",
          id: "file-rules-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const done = await patch(
              { include: patternsOf(include.value), exclude: patternsOf(exclude.value) },
              "File rules saved. The index follows them at its next sync.",
            );
            if (done) {
              // The list reloads now; documents the rules leave out go at the next sync.
              docsChanged(folder.name);
              draw();
              document.getElementById("save-file-rules")?.focus();
            }
          },
        },
        h(
          "div",
          { class: "pattern-fields" },
          h(
            "label",
            { class: "field", for: "folder-include" },
            h("span", { class: "field-label" }, "Include only ", h("code", {}, "include")),
            include,
            h("span", { class: "field-help" }, "When given, only the paths these match are indexed."),
          ),
          h(
            "label",
            { class: "field", for: "folder-exclude" },
            h("span", { class: "field-label" }, "Exclude ", h("code", {}, "exclude")),
            exclude,
            h("span", { class: "field-help" }, "Paths these match are left out, whatever include says."),
          ),
        ),
        h(
          "p",
          { class: "field-help" },
          "The index follows at its next sync: the next write made through ragdown, or a reindex. Writes to a path the rules leave out are refused.",
        ),
        h(
          "div",
          { class: "button-row" },
          h("button", { type: "submit", id: "save-file-rules" }, "Save file rules"),
        ),
      ),
    );
  }

  function indexMdSection() {
    const box = h("input", {
      type: "checkbox",
      id: "folder-index-md",
      checked: folder.index_md === true,
      onchange: async () => {
        box.disabled = true;
        const done = await patch(
          { index_md: box.checked },
          box.checked ? "index.md upkeep is on for this folder." : "index.md upkeep is off for this folder.",
        );
        if (!done) box.checked = !box.checked;
        draw();
        document.getElementById("folder-index-md")?.focus();
      },
    });
    return h(
      "section",
      { class: "section", "aria-labelledby": "index-md-heading" },
      h("h2", { id: "index-md-heading" }, "index.md"),
      h(
        "label",
        { class: "check", for: "folder-index-md" },
        box,
        h("span", {}, "Keep index.md link lists current after each write made through ragdown"),
      ),
      h(
        "p",
        { class: "field-help" },
        "Each directory's ",
        h("code", {}, "index.md"),
        ", from the folder's root down to the written document, gets its list of links regenerated between ",
        h("code", {}, "<!-- ragdown:index-start -->"),
        " and ",
        h("code", {}, "<!-- ragdown:index-end -->"),
        "; a missing one is made, prose outside the markers is never touched. ",
        folder.index_md === undefined || folder.index_md === null
          ? "Unset: off, except for the hallouminate tool set's writes, which keep them unless this is off."
          : null,
      ),
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
              const answer = await api.deleteFolder(folder.name, input.value);
              toastDone(`Deleted the folder ${folder.name}.`, answer);
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

const DEFAULT_TOOLSET = "ragdown";
const CUSTOM = "custom";
const TOOLSETS = [
  { name: "ragdown", label: "ragdown (the default)" },
  { name: "markindex", label: "markindex" },
  { name: "readmedb", label: "readmedb" },
  { name: "hallouminate", label: "hallouminate" },
];

/** A textarea of gitignore-style patterns, one a line (a hand-written single string counts as one). */
function patternArea(id, value, placeholder) {
  const lines = Array.isArray(value) ? value : typeof value === "string" && value ? [value] : [];
  return h("textarea", {
    id,
    class: "pattern-input",
    rows: 5,
    value: lines.join("\n"),
    placeholder,
    spellcheck: "false",
    autocomplete: "off",
    autocapitalize: "off",
  });
}

/** A textarea's patterns: one a line, trimmed, blank lines left out; null for none (removes the key). */
export function patternsOf(text) {
  const patterns = String(text || "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  return patterns.length ? patterns : null;
}
