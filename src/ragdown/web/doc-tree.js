// A folder's documents as a collapsible tree of its subfolders, each with the count of documents
// under it. It renders lazily, so a folder of 10,000 documents paints fast: a closed subfolder has
// no DOM below it, and a level shows its first PAGE entries with "Show more" for the rest. The open
// document's subfolders are opened and it is shown, however far down its level it sits.

import { badge, basename, fmtDay, h, mount, plural, relPath, tagChips } from "./dom.js";
import { routes } from "./router.js";

export const PAGE = 200;

/** `{ name, dir, dirs: Map, docs: [], count }`: the subfolder tree of `docs` (paths with the folder). */
export function buildTree(docs) {
  const root = { name: "", dir: "", dirs: new Map(), docs: [], count: 0 };
  for (const doc of docs) {
    const parts = relPath(doc.path).split("/");
    let node = root;
    node.count += 1;
    for (const part of parts.slice(0, -1)) {
      let next = node.dirs.get(part);
      if (!next) {
        next = { name: part, dir: node.dir ? `${node.dir}/${part}` : part, dirs: new Map(), docs: [], count: 0 };
        node.dirs.set(part, next);
      }
      next.count += 1;
      node = next;
    }
    node.docs.push(doc);
  }
  return root;
}

function sortedDirs(node) {
  return [...node.dirs.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export class DocTree {
  constructor({ onTag }) {
    this.onTag = onTag;
    this.open = new Set(); // the subfolders open (their paths in the folder)
    this.shown = new Map(); // a level's dir -> how many of its entries are rendered
    this.root = null;
    this.activePath = null;
  }

  /** Renders `docs` (sorted by path) into `host`, revealing `activePath`. */
  render(host, docs, activePath) {
    this.host = host;
    this.root = buildTree(docs);
    this.reveal(activePath, false);
    mount(host, this.level(this.root, 0));
  }

  /** Opens the subfolders of `path` and makes sure its entry is rendered; redraws when asked. */
  reveal(path, redraw = true) {
    this.activePath = path;
    if (!path || !this.root) return;
    const parts = relPath(path).split("/");
    let node = this.root;
    for (const part of parts.slice(0, -1)) {
      const next = node.dirs.get(part);
      if (!next) return;
      this.open.add(next.dir);
      node = next;
    }
    const entries = this.entries(node);
    const at = entries.findIndex((entry) => entry.doc && entry.doc.path === path);
    if (at >= (this.shown.get(node.dir) || PAGE)) this.shown.set(node.dir, at + 1);
    if (redraw && this.host) {
      const scroll = this.host.scrollTop;
      mount(this.host, this.level(this.root, 0));
      this.host.scrollTop = scroll;
    }
  }

  /** Whether `path` is rendered as a tree entry now. */
  hasEntry(path) {
    return Boolean(this.host && this.host.querySelector(`.doc-item[data-path="${CSS.escape(path)}"]`));
  }

  entries(node) {
    return [
      ...sortedDirs(node).map((dir) => ({ dir })),
      ...node.docs.map((doc) => ({ doc })),
    ];
  }

  level(node, depth) {
    const entries = this.entries(node);
    const limit = this.shown.get(node.dir) || PAGE;
    const list = h("ul", {
      class: depth ? "doc-tree-level" : "doc-list doc-tree",
      role: depth ? "group" : "tree",
      "aria-label": depth ? undefined : "Documents",
    });
    for (const entry of entries.slice(0, limit)) {
      list.append(entry.dir ? this.dirItem(entry.dir, depth) : this.docItem(entry.doc));
    }
    if (entries.length > limit) {
      const rest = entries.length - limit;
      list.append(
        h(
          "li",
          { class: "tree-more" },
          h(
            "button",
            {
              type: "button",
              class: "link-button",
              onclick: (event) => {
                this.shown.set(node.dir, limit + PAGE);
                event.currentTarget.closest("ul").replaceWith(this.level(node, depth));
              },
            },
            `Show ${plural(Math.min(rest, PAGE), "more")} (${rest} left)`,
          ),
        ),
      );
    }
    return list;
  }

  dirItem(node, depth) {
    const open = this.open.has(node.dir);
    const item = h("li", { class: "tree-dir", role: "treeitem", "aria-expanded": String(open) });
    const toggle = h(
      "button",
      {
        type: "button",
        class: "tree-toggle",
        "aria-expanded": String(open),
        dataset: { dir: node.dir },
        onclick: () => {
          const now = !this.open.has(node.dir);
          if (now) this.open.add(node.dir);
          else this.open.delete(node.dir);
          item.replaceWith(this.dirItem(node, depth));
          this.host.querySelector(`.tree-toggle[data-dir="${CSS.escape(node.dir)}"]`)?.focus();
        },
      },
      h("span", { class: "tree-caret", "aria-hidden": "true" }, open ? "▾" : "▸"),
      h("span", { class: "tree-name" }, node.name),
      h("span", { class: "tree-count", title: plural(node.count, "document") }, String(node.count)),
    );
    item.append(toggle);
    if (open) item.append(this.level(node, depth + 1));
    return item;
  }

  docItem(doc) {
    const superseded = doc.superseded_by && doc.superseded_by.length;
    return h(
      "li",
      { role: "none" },
      h(
        "a",
        {
          class: ["doc-item", superseded && "superseded", doc.path === this.activePath && "active"],
          role: "treeitem",
          href: routes.doc(doc.path),
          dataset: { path: doc.path },
          title: doc.description || relPath(doc.path),
        },
        h("span", { class: "doc-title" }, doc.title || basename(doc.path)),
        h(
          "span",
          { class: "doc-meta" },
          h("span", { class: "doc-path" }, basename(doc.path)),
          superseded ? badge("superseded", "superseded", `Superseded by ${doc.superseded_by.join(", ")}`) : null,
          doc.created_by ? badge("agent", "agent", `Written by ${doc.created_by}`) : null,
          h("span", { class: "doc-date" }, fmtDay(doc.mtime_ms)),
        ),
      ),
      tagChips(doc.tags, this.onTag),
    );
  }
}
