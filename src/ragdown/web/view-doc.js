// One document: the rendered preview with its outline beside it, its superseded banner, backlinks,
// and Edit, Move and Delete.

import { api, ApiError } from "./api.js";
import { badge, basename, h, mount, notice, plainText, relPath, spinner, tagChips } from "./dom.js";
import { ask, choose, confirmDialog, toast, toastError } from "./dialogs.js";
import { newDocument } from "./folder-pane.js";
import { mountOutline } from "./outline.js";
import { FileCache, fillPreview, scrollToHeading, scrollToLine } from "./preview.js";
import { navigate, routes } from "./router.js";
import { docsChanged, readOnly } from "./state.js";

export async function renderDoc(main, route, { signal, pane }) {
  const path = route.path;
  const files = new FileCache();
  mount(main, h("div", { class: "page doc-page" }, spinner()));
  let doc;
  try {
    doc = await api.doc(path, signal);
  } catch (err) {
    if (err.name === "AbortError") return { dispose: () => files.dispose() };
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
          writable
            ? h(
                "a",
                { class: "button primary", href: routes.edit(path), id: "edit-button", accesskey: "e" },
                "Edit",
              )
            : null,
          writable ? h("button", { type: "button", onclick: () => moveDoc(path) }, "Rename / move") : null,
          writable
            ? h("button", { type: "button", class: "danger", onclick: () => deleteDoc(path) }, "Delete")
            : null,
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
    onMissing: writable ? (target) => offerToCreate(route.folder, path, target) : null,
  });

  const line = Number(route.query.get("line"));
  const end = Number(route.query.get("end")) || line;
  const heading = route.query.get("h");
  if (line > 0) scrollToLine(preview, line, end);
  else if (heading) scrollToHeading(preview, heading);

  const outline = mountOutline(outlineEl, { path, preview, signal });
  loadBacklinks(path, backlinksEl, signal);
  return {
    dispose: () => {
      outline.dispose();
      files.dispose();
    },
    focusTarget: line > 0 || heading ? null : "doc-title",
  };
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
        help: "Subfolders are created as needed. A document keeps a Markdown extension.",
      },
    ],
    validate: ({ to }) => (to ? null : "Give the new path."),
  });
  if (!values) return;
  let rel = values.to.replace(/\\/g, "/").replace(/^\/+/, "");
  if (!/\.(md|markdown|mdx)$/i.test(rel)) rel += ".md";
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
  const sure = await confirmDialog({
    title: "Delete this document?",
    message: `${relPath(path)} will be deleted for good: there is no trash. Links to it are left as they are.`,
    ok: "Delete",
    danger: true,
  });
  if (!sure) return;
  const folder = path.split("/")[0];
  try {
    await api.deleteDoc(path);
    toast(`Deleted ${relPath(path)}.`, "success");
    docsChanged(folder);
    navigate(routes.folder(folder), { replace: true });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) docsChanged(folder);
    toastError(err, "Could not delete it");
  }
}
