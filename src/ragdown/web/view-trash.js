// A folder's Trash: its deleted documents, most recently deleted first, each with who made its last
// version and Restore (its last version written back, through the same door as every write).

import { api } from "./api.js";
import { fmtSize, h, mount, mountNoSuchFolder, notice, plural, relPath, spinner } from "./dom.js";
import { toastDone } from "./dialogs.js";
import { restoredText, restoreVersion, timeText, whoText } from "./history.js";
import { navigate, routes } from "./router.js";
import { docsChanged, folderByName, readOnly, writeAction } from "./state.js";

export async function renderTrash(main, route, { signal }) {
  const name = route.folder;
  const folder = folderByName(name);
  if (!folder) {
    mountNoSuchFolder(main, name);
    return {};
  }
  const listEl = h("div", { class: "trash-host" }, spinner());
  mount(
    main,
    h(
      "div",
      { class: "page trash-page" },
      h(
        "div",
        { class: "page-head" },
        h("h1", { tabindex: "-1" }, `Trash of ${folder.title || folder.name}`),
        h("a", { class: "button", href: routes.folder(name) }, "Back to the folder"),
      ),
      h(
        "p",
        { class: "lead" },
        "Documents deleted from this folder, most recently deleted first. Restore brings one back with the text of its last version; the versions before it are kept too.",
      ),
      readOnly() ? notice("info", "The server is read-only: nothing can be restored here.") : null,
      listEl,
    ),
  );
  let answer;
  try {
    answer = await api.trash(name, signal);
  } catch (err) {
    if (err.name !== "AbortError") mount(listEl, notice("error", err.message));
    return {};
  }
  if (signal.aborted) return {};
  if (!answer.enabled) {
    mount(
      listEl,
      notice(
        "info",
        "The version history is off on this server (RAGDOWN_HISTORY=false), so deleted documents are not kept.",
      ),
    );
    return {};
  }
  const entries = answer.trash || [];
  mount(
    listEl,
    entries.length
      ? [
          h("p", { class: "pane-count" }, plural(entries.length, "deleted document")),
          h(
            "ul",
            { class: "trash-list", "aria-label": "Deleted documents" },
            entries.map((entry) => trashRow(entry)),
          ),
        ]
      : h("p", { class: "empty", id: "trash-empty" }, "The trash is empty: nothing was deleted here."),
  );
  return {};
}

function trashRow(entry) {
  const last = entry.last || {};
  return h(
    "li",
    { class: "trash-item", dataset: { path: entry.path } },
    h(
      "div",
      { class: "trash-text" },
      h(
        "a",
        { class: "trash-path", href: routes.doc(entry.path), title: "Its versions" },
        relPath(entry.path),
      ),
      h("div", { class: "trash-meta muted" }, "Deleted ", timeText(entry.deleted_at)),
      h(
        "div",
        { class: "trash-meta muted" },
        `Last version v${last.version} by `,
        h("span", { class: "trash-who" }, whoText(last)),
        ` · ${fmtSize(last.size)} · ${plural(last.lines, "line")}`,
      ),
    ),
    writeAction(
      h(
        "button",
        {
          type: "button",
          class: "primary small trash-restore",
          "aria-label": `Restore ${relPath(entry.path)}`,
          onclick: () => restoreEntry(entry),
        },
        "Restore",
      ),
    ),
  );
}

async function restoreEntry(entry) {
  const last = entry.last;
  const answer = await restoreVersion(entry.path, last, {
    title: `Restore ${relPath(entry.path)}?`,
    message: `It comes back with the text of its last version (v${last.version}, by ${whoText(last)}).`,
  });
  if (!answer) return;
  toastDone(`${relPath(entry.path)} is back. ${restoredText(answer, last.version)}`, answer);
  docsChanged(entry.path.split("/")[0]);
  navigate(routes.doc(entry.path));
}
