// A folder's Trash: its deleted documents, most recently deleted first, each with who made its last
// version, Restore (its last version written back, through the same door as every write) and Delete
// forever (it and all its versions forgotten); Empty trash forgets them all. Both ask first.

import { api } from "./api.js";
import { fmtSize, h, mount, mountNoSuchFolder, notice, plural, relPath, spinner } from "./dom.js";
import { confirmDialog, toast, toastDone, toastError } from "./dialogs.js";
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
        writeAction(
          h(
            "button",
            {
              type: "button",
              class: "danger trash-empty",
              hidden: true,
              onclick: () => emptyTrash(name, listEl),
            },
            "Empty trash",
          ),
        ),
      ),
      h(
        "p",
        { class: "lead" },
        "Documents deleted from this folder, most recently deleted first. Restore brings one back with the text of its last version; the versions before it are kept too. Delete forever forgets a document and all its versions.",
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
  showEntries(listEl, answer.trash || []);
  return {};
}

function showEntries(listEl, entries) {
  const emptyButton = listEl.closest(".trash-page")?.querySelector(".trash-empty");
  if (emptyButton) emptyButton.hidden = !entries.length;
  mount(
    listEl,
    entries.length
      ? [
          h("p", { class: "pane-count" }, plural(entries.length, "deleted document")),
          h(
            "ul",
            { class: "trash-list", "aria-label": "Deleted documents" },
            entries.map((entry) => trashRow(entry, listEl, entries)),
          ),
        ]
      : h("p", { class: "empty", id: "trash-empty" }, "The trash is empty: nothing was deleted here."),
  );
}

function trashRow(entry, listEl, entries) {
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
    writeAction(
      h(
        "button",
        {
          type: "button",
          class: "danger small trash-purge",
          "aria-label": `Delete ${relPath(entry.path)} forever`,
          onclick: () => purgeEntry(entry, listEl, entries),
        },
        "Delete forever",
      ),
    ),
  );
}

async function purgeEntry(entry, listEl, entries) {
  const sure = await confirmDialog({
    title: `Delete ${relPath(entry.path)} forever?`,
    message: "It leaves the trash with all its versions, for good: this cannot be undone.",
    ok: "Delete forever",
    danger: true,
  });
  if (!sure) return;
  try {
    await api.purgeTrash(entry.path.split("/")[0], entry.path);
  } catch (err) {
    toastError(err, "Could not delete it");
    return;
  }
  toast(`${relPath(entry.path)} is deleted forever.`);
  showEntries(listEl, entries.filter((e) => e.path !== entry.path));
}

async function emptyTrash(name, listEl) {
  const sure = await confirmDialog({
    title: "Empty the trash?",
    message:
      "Every document in this folder's trash is deleted for good, with all its versions: this cannot be undone.",
    ok: "Empty trash",
    danger: true,
  });
  if (!sure) return;
  let answer;
  try {
    answer = await api.purgeTrash(name);
  } catch (err) {
    toastError(err, "Could not empty the trash");
    return;
  }
  toast(`${plural(answer.forgotten.length, "document")} deleted forever.`);
  showEntries(listEl, []);
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
