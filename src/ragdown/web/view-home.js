// The start page: every folder as a card, the Markdown loose in the docs directory, and a new folder.

import { api } from "./api.js";
import { badge, h, mount, notice, plural } from "./dom.js";
import { ask, confirmDialog, toast, toastError } from "./dialogs.js";
import { navigate, routes } from "./router.js";
import { isAdmin, readOnly, refreshFolders, state } from "./state.js";

export function folderBadges(folder) {
  return [
    badge(
      folder.mcp ? "MCP on" : "MCP off",
      folder.mcp ? "on" : "off",
      folder.mcp ? `Served at ${folder.mcp_path}` : "Human-only: no MCP endpoint",
    ),
    folder.created_by ? badge("Made by an agent", "agent", `created_by: ${folder.created_by}`) : null,
  ];
}

export async function renderHome(main, _route, { signal }) {
  // A delete or a folder list answered after the user has gone to another page must not draw this one over it.
  const draw = () => {
    if (signal.aborted) return;
    const folders = state.folders;
    const status = state.status || {};
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h(
          "div",
          { class: "page-head" },
          h("h1", { tabindex: "-1" }, "Folders"),
          readOnly() || !isAdmin()
            ? null
            : h(
                "button",
                { type: "button", class: "primary", id: "home-new-folder", onclick: createFolder },
                "New folder",
              ),
        ),
        h(
          "p",
          { class: "lead" },
          `Each top-level directory of the docs directory is a folder: indexed, searchable here, and its own MCP server once MCP is on. ${plural(status.files || 0, "file")} and ${plural(status.chunks || 0, "chunk")} are indexed.`,
        ),
        status.read_only
          ? notice(
              "info",
              "The server is read-only: documents and folders cannot be created, changed or deleted here. Folder settings can still change.",
            )
          : null,
        folders.length
          ? h(
              "ul",
              { class: "folder-cards" },
              folders.map((folder) =>
                h(
                  "li",
                  { class: "folder-card" },
                  h(
                    "a",
                    { href: routes.folder(folder.name), class: "folder-card-title" },
                    folder.title || folder.name,
                  ),
                  h("span", { class: "folder-card-name" }, folder.name),
                  h("span", { class: "folder-card-badges" }, folderBadges(folder)),
                  h(
                    "span",
                    { class: "folder-card-counts" },
                    `${plural(folder.files, "file")} · ${plural(folder.chunks, "chunk")}`,
                  ),
                  h(
                    "a",
                    { href: routes.folderSettings(folder.name), class: "small-link" },
                    "Settings and MCP config",
                  ),
                ),
              ),
            )
          : h(
              "div",
              { class: "empty" },
              h(
                "p",
                {},
                "There are no folders yet. A folder is a directory at the top of the docs directory.",
              ),
            ),
        renderLoose(),
      ),
    );
  };

  function renderLoose() {
    const loose = state.looseFiles;
    if (!loose.length) return null;
    return h(
      "section",
      { class: "section" },
      h("h2", {}, "Loose files"),
      h(
        "p",
        { class: "field-help" },
        "Markdown directly in the docs directory, outside every folder, is not indexed. Move it into a folder to search it.",
      ),
      h(
        "ul",
        { class: "loose-list" },
        loose.map((name) =>
          h(
            "li",
            {},
            h("span", { class: "mono" }, name),
            readOnly()
              ? null
              : h(
                  "button",
                  {
                    type: "button",
                    class: "small danger",
                    "aria-label": `Delete ${name}`,
                    onclick: () => deleteLoose(name),
                  },
                  "Delete",
                ),
          ),
        ),
      ),
    );
  }

  async function deleteLoose(name) {
    const sure = await confirmDialog({
      title: "Delete this file?",
      message: `${name} will be deleted from the docs directory for good.`,
      ok: "Delete",
      danger: true,
    });
    if (!sure) return;
    try {
      await api.deleteLoose(name);
      toast(`Deleted ${name}.`, "success");
      await refreshFolders();
      draw();
    } catch (err) {
      toastError(err);
    }
  }

  draw();
  if (!state.foldersLoaded) {
    await refreshFolders();
    draw();
  }
  return { onState: draw };
}

/** New folder: name, optional title, MCP on or off. Opens it when made. */
export async function createFolder() {
  const values = await ask({
    title: "New folder",
    ok: "Create",
    fields: [
      {
        name: "name",
        label: "Name",
        required: true,
        placeholder: "work",
        help: "The directory name: one name without / or \\, not starting with a dot or a dash.",
      },
      { name: "title", label: "Title (optional)", placeholder: "Work notes" },
      { name: "mcp", label: "Serve it over MCP now", type: "checkbox", value: false },
    ],
    validate: ({ name }) =>
      !name || name.includes("/") || name.includes("\\") || name.startsWith(".") || name.startsWith("-")
        ? "Use a plain directory name, not starting with a dot or a dash."
        : null,
  });
  if (!values) return;
  try {
    const answer = await api.createFolder({
      name: values.name,
      title: values.title || undefined,
      mcp: values.mcp,
    });
    await refreshFolders();
    toast(`Created the folder ${answer.folder.name}.`, "success");
    navigate(routes.folder(answer.folder.name));
  } catch (err) {
    toastError(err, "Could not create the folder");
  }
}
