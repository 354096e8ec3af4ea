// One document: the rendered preview with its outline beside it, its superseded banner, backlinks,
// its History (history.js), and Edit, Move and Delete. A deleted one shows its versions and Restore.

import { api, ApiError } from "./api.js";
import { badge, basename, h, mount, notice, plainText, relPath, spinner, tagChips } from "./dom.js";
import { ask, choose, confirmDialog, toastDone, toastError } from "./dialogs.js";
import { newDocument } from "./folder-pane.js";
import { HistoryPanel, historyEnabled, restoredText, restoreVersion, timeText } from "./history.js";
import { mountOutline } from "./outline.js";
import { blockAtLine, FileCache, fillPreview, scrollToHeading, scrollToLine } from "./preview.js";
import { keepInView } from "./scroll-keep.js";
import { navigate, reload, routes, setQueryQuietly } from "./router.js";
import { canWrite, docsChanged, readOnly, writeAction } from "./state.js";

export async function renderDoc(main, route, { signal, pane }) {
  const path = route.path;
  const files = new FileCache();
  mount(main, h("div", { class: "page doc-page" }, spinner()));
  let doc;
  try {
    doc = await api.doc(path, signal);
  } catch (err) {
    if (err.name === "AbortError") return { dispose: () => files.dispose() };
    if (err.status === 404) {
      const deleted = await renderDeleted(main, route, signal);
      if (deleted) return deleted;
      if (signal.aborted) return {};
    }
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h("h1", { tabindex: "-1" }, err.status === 404 ? "No such document" : "Could not open the document"),
        notice("error", err.message),
        h("p", {}, h("a", { href: routes.folder(route.folder) }, "Back to the folder")),
      ),
    );
    return { dispose: () => files.dispose() };
  }
  if (signal.aborted) return { dispose: () => files.dispose() };

  const preview = h("article", { class: "preview", id: "preview", "aria-label": "Document" });
  const outlineEl = h("nav", {
    class: "doc-outline",
    id: "doc-outline",
    "aria-label": "Outline",
    hidden: true,
  });
  const backlinksEl = h(
    "section",
    { class: "backlinks", "aria-label": "Backlinks" },
    h("h2", {}, "Backlinks"),
    spinner(),
  );
  const writable = !readOnly();
  const superseded = doc.superseded_by || [];

  // The History panel, above the preview; `?history=1` in the address keeps it open on a reload.
  const historyHost = h("div", { class: "history-host" });
  // A link (it opens the same view with `?history=1` in a new tab) that toggles the panel in place.
  const historyButton = h(
    "a",
    {
      class: "button",
      id: "history-button",
      href: routes.doc(path, { history: true }),
      "aria-expanded": "false",
      "aria-controls": "history-panel",
      title: "Earlier versions of this document",
      onclick: (event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        if (panel) closeHistory(true);
        else openHistory(true);
      },
    },
    "History",
  );
  let panel = null;
  const openHistory = (focus) => {
    panel = new HistoryPanel({
      path,
      hash: doc.hash,
      writable,
      onClose: () => closeHistory(true),
      onRestored: () => {
        docsChanged(route.folder);
        reload();
      },
    });
    mount(historyHost, panel.el);
    historyButton.setAttribute("aria-expanded", "true");
    setQueryQuietly("history", "1");
    panel.load();
    if (focus) panel.focus();
  };
  const closeHistory = (focus) => {
    if (!panel) return;
    panel.dispose();
    panel = null;
    mount(historyHost);
    historyButton.setAttribute("aria-expanded", "false");
    setQueryQuietly("history", null);
    if (focus) historyButton.focus();
  };

  mount(
    main,
    h(
      "div",
      { class: "page doc-page" },
      h(
        "header",
        { class: "doc-head" },
        h(
          "div",
          { class: "doc-head-text" },
          h("h1", { tabindex: "-1", id: "doc-title" }, doc.title || basename(path)),
          h(
            "p",
            { class: "doc-path-line" },
            h("a", { href: routes.folder(route.folder) }, route.folder),
            h("span", { class: "muted" }, ` / ${relPath(path)}`),
            doc.created_by
              ? [" ", badge("Written by an agent", "agent", `created_by: ${doc.created_by}`)]
              : null,
          ),
          tagChips(doc.tags, (tag) => pane.setTag(tag)),
        ),
        h(
          "div",
          { class: "doc-actions" },
          writeAction(
            h(
              "a",
              { class: "button primary", href: routes.edit(path), id: "edit-button", accesskey: "e" },
              "Edit",
            ),
          ),
          historyButton,
          writeAction(
            h("button", { type: "button", id: "move-button", onclick: () => moveDoc(path) }, "Rename / move"),
          ),
          writeAction(
            h(
              "button",
              { type: "button", class: "danger", id: "delete-button", onclick: () => deleteDoc(path) },
              "Delete",
            ),
          ),
        ),
      ),
      superseded.length
        ? notice(
            "warn",
            "This document is superseded by ",
            superseded.map((next, index) => [
              index ? ", " : "",
              h("a", { href: routes.doc(next), class: "superseded-link" }, relPath(next)),
            ]),
            ". Search and hook context skip it.",
          )
        : null,
      h(
        "div",
        { class: "doc-layout" },
        outlineEl,
        h(
          "div",
          { class: "doc-main" },
          historyHost,
          preview,
          backlinksEl,
          h(
            "p",
            { class: "doc-foot muted" },
            `${doc.total_lines ?? ""} lines · hash ${String(doc.hash || "").slice(0, 12)}`,
          ),
        ),
      ),
    ),
  );

  fillPreview(preview, doc.html || "", {
    files,
    path,
    signal,
    onTag: (tag) => pane.setTag(tag),
    onMissing: canWrite() ? (target) => offerToCreate(route.folder, path, target) : null,
  });

  const line = Number(route.query.get("line"));
  const end = Number(route.query.get("end")) || line;
  const heading = route.query.get("h");
  if (line > 0 && scrollToLine(preview, line, end)) keepInView(preview, blockAtLine(preview, line), signal);
  else if (heading) scrollToHeading(preview, heading);

  const outline = mountOutline(outlineEl, { path, preview, signal });
  loadBacklinks(path, backlinksEl, signal);
  if (route.query.get("history")) openHistory(false);
  return {
    dispose: () => {
      if (panel) panel.dispose();
      outline.dispose();
      files.dispose();
    },
    focusTarget: line > 0 || heading ? null : "doc-title",
  };
}

/**
 * A document that is not on disk but in the history's trash: what it was, Restore, and its versions.
 * Null when the history does not know it as deleted (the caller says "No such document").
 */
async function renderDeleted(main, route, signal) {
  const path = route.path;
  let answer;
  try {
    answer = await api.history(path, signal);
  } catch {
    return null;
  }
  const versions = answer.versions || [];
  if (signal.aborted || !answer.deleted || !versions.length) return null;
  const writable = !readOnly();
  const last = versions[0];
  const panel = new HistoryPanel({
    path,
    deleted: true,
    writable,
    onRestored: () => {
      docsChanged(route.folder);
      reload();
    },
  });
  const restoreLast = async () => {
    const restored = await restoreVersion(path, last, {
      title: `Restore ${relPath(path)}?`,
      message: `It comes back with the text of its last version (v${last.version}).`,
    });
    if (!restored) return;
    toastDone(restoredText(restored, last.version), restored);
    docsChanged(route.folder);
    reload();
  };
  mount(
    main,
    h(
      "div",
      { class: "page doc-page deleted-page" },
      h(
        "header",
        { class: "doc-head" },
        h(
          "div",
          { class: "doc-head-text" },
          h("h1", { tabindex: "-1", id: "doc-title" }, `Deleted: ${basename(path)}`),
          h(
            "p",
            { class: "doc-path-line" },
            h("a", { href: routes.folder(route.folder) }, route.folder),
            h("span", { class: "muted" }, ` / ${relPath(path)}`),
          ),
        ),
        h(
          "div",
          { class: "doc-actions" },
          writeAction(
            h(
              "button",
              { type: "button", class: "primary", id: "restore-deleted", onclick: restoreLast },
              "Restore it",
            ),
          ),
        ),
      ),
      notice(
        "warn",
        "This document was deleted: it is in the folder's ",
        h("a", { href: routes.folderTrash(route.folder) }, "Trash"),
        ". Its last version is ",
        `v${last.version}, from `,
        timeText(last.at),
        ".",
      ),
      panel.el,
    ),
  );
  panel.load();
  return { dispose: () => panel.dispose() };
}

async function loadBacklinks(path, host, signal) {
  try {
    const answer = await api.backlinks(path, signal);
    const links = answer.backlinks || [];
    mount(
      host,
      h("h2", {}, `Backlinks (${links.length})`),
      links.length
        ? h(
            "ul",
            { class: "backlink-list" },
            links.map((link) =>
              h(
                "li",
                {},
                h(
                  "a",
                  { href: routes.doc(link.path), class: "backlink-title" },
                  link.title || relPath(link.path),
                ),
                h("span", { class: "muted" }, ` ${relPath(link.path)}`),
                h(
                  "ul",
                  { class: "backlink-lines" },
                  (link.lines || []).map((item) =>
                    h(
                      "li",
                      {},
                      h(
                        "a",
                        { href: routes.doc(link.path, { line: item.line }) },
                        h("span", { class: "line-no" }, String(item.line)),
                        h("span", { class: "line-text" }, plainText(item.text)),
                      ),
                    ),
                  ),
                ),
              ),
            ),
          )
        : h("p", { class: "empty" }, "No other document links here."),
    );
  } catch (err) {
    if (err.name !== "AbortError") mount(host, h("h2", {}, "Backlinks"), notice("error", err.message));
  }
}

async function offerToCreate(folder, fromPath, target) {
  const name = target.split("#")[0].split("/").pop();
  const create = await confirmDialog({
    title: "No such document",
    message: `Nothing in this folder is called “${target}”. Create it?`,
    ok: "Create it",
  });
  if (create) await newDocument(folder, fromPath, name);
}

async function moveDoc(path) {
  const folder = path.split("/")[0];
  const values = await ask({
    title: "Rename or move",
    message: "Links to it in this folder are rewritten to follow it.",
    ok: "Move",
    fields: [
      {
        name: "to",
        label: `New path inside ${folder}`,
        value: relPath(path),
        required: true,
        help: "Subfolders are created as needed. A document keeps its extension (.md for Markdown).",
      },
    ],
    validate: ({ to }) => (to ? null : "Give the new path."),
  });
  if (!values) return;
  let rel = values.to.replace(/\\/g, "/").replace(/^\/+/, "");
  // A Markdown document keeps a Markdown extension; a plain-text one (todo.txt) its own.
  const markdown = /\.(md|markdown|mdx)$/i;
  const own = markdown.test(path) ? null : path.slice(path.lastIndexOf("."));
  if (own && !rel.toLowerCase().endsWith(own.toLowerCase())) rel += own;
  else if (!own && !markdown.test(rel)) rel += ".md";
  const to = `${folder}/${rel}`;
  if (to === path) return;
  try {
    const answer = await api.move(path, to);
    docsChanged(folder);
    const updated = (answer.updated || []).filter((item) => item !== answer.to);
    await choose({
      title: "Moved",
      message: `${relPath(answer.from)} is now ${relPath(answer.to)}.`,
      details: updated.length
        ? h(
            "div",
            {},
            h(
              "p",
              {},
              `Links were rewritten in ${updated.length === 1 ? "1 document" : `${updated.length} documents`}:`,
            ),
            h(
              "ul",
              { class: "updated-list" },
              updated.map((item) => h("li", { class: "mono" }, relPath(item))),
            ),
          )
        : h("p", {}, "No other document linked to it."),
      choices: [{ value: true, label: "OK", kind: "primary" }],
    });
    navigate(routes.doc(answer.to), { replace: true });
  } catch (err) {
    toastError(err, "Could not move it");
  }
}

async function deleteDoc(path) {
  const folder = path.split("/")[0];
  const trash = await historyEnabled(folder);
  const where =
    trash === true
      ? "moves to the folder's Trash, where it can be restored with its versions"
      : trash === false
        ? "will be deleted for good: the version history is off, so there is no trash"
        : "will be deleted";
  const sure = await confirmDialog({
    title: "Delete this document?",
    message: `${relPath(path)} ${where}. Links to it are left as they are.`,
    ok: "Delete",
    danger: true,
  });
  if (!sure) return;
  try {
    const answer = await api.deleteDoc(path);
    toastDone(
      trash ? `Deleted ${relPath(path)}: it is in the folder's Trash.` : `Deleted ${relPath(path)}.`,
      answer,
    );
    docsChanged(folder);
    navigate(routes.folder(folder), { replace: true });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) docsChanged(folder);
    toastError(err, "Could not delete it");
  }
}
