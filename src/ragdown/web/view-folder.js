// A folder's own page, beside its document list: what it is, and its recently changed documents.

import { api } from "./api.js";
import { basename, fmtDate, h, mount, mountNoSuchFolder, notice, plural, relPath, spinner } from "./dom.js";
import { routes } from "./router.js";
import { folderByName, writeAction } from "./state.js";
import { folderBadges } from "./view-home.js";
import { newDocument } from "./folder-pane.js";

const RECENT = 8;

export async function renderFolder(main, route, { signal }) {
  const name = route.folder;
  const folder = folderByName(name);
  if (!folder) {
    mountNoSuchFolder(main, name);
    return {};
  }
  const recentEl = h("div", {}, spinner());
  mount(
    main,
    h(
      "div",
      { class: "page" },
      h(
        "div",
        { class: "page-head" },
        h("h1", { tabindex: "-1" }, folder.title || folder.name),
        h("span", { class: "page-head-badges" }, folderBadges(folder)),
      ),
      h(
        "p",
        { class: "lead" },
        `${plural(folder.files, "file")} and ${plural(folder.chunks, "chunk")} indexed. `,
        folder.mcp
          ? h("span", {}, "Agents reach it at ", h("code", {}, folder.mcp_path), ".")
          : "It is human-only: searchable here, with no MCP endpoint until you turn MCP on.",
      ),
      h(
        "div",
        { class: "button-row" },
        writeAction(
          h(
            "button",
            { type: "button", class: "primary", onclick: () => newDocument(name, null) },
            "New document",
          ),
        ),
        h(
          "a",
          { class: "button", href: routes.folderSettings(name) },
          folder.mcp ? "Settings and MCP config" : "Settings: turn MCP on",
        ),
        h("a", { class: "button", href: routes.folderTrash(name), id: "folder-trash" }, "Trash"),
        h("a", { class: "button", href: routes.folderChanges(name), id: "folder-changes" }, "Recent changes"),
      ),
      h("h2", {}, "Recently changed"),
      recentEl,
    ),
  );
  try {
    const answer = await api.docs(name, signal);
    const docs = (answer.docs || []).sort((a, b) => (b.mtime_ms || 0) - (a.mtime_ms || 0)).slice(0, RECENT);
    mount(
      recentEl,
      docs.length
        ? h(
            "ul",
            { class: "recent-list" },
            docs.map((doc) =>
              h(
                "li",
                {},
                h("a", { href: routes.doc(doc.path) }, doc.title || basename(doc.path)),
                h("span", { class: "muted" }, ` ${relPath(doc.path)} · ${fmtDate(doc.mtime_ms)}`),
              ),
            ),
          )
        : h("p", { class: "empty" }, "No documents yet."),
    );
  } catch (err) {
    if (err.name !== "AbortError") mount(recentEl, notice("error", err.message));
  }
  return {};
}
