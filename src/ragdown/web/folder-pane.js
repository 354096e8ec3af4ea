// The column beside a folder's pages: its documents, the search box and the hits, New document
// and Upload. It stays in place while documents of the same folder open beside it, so the hits
// of a search stay visible while you read them.

import { api, ApiError } from "./api.js";
import {
  badge,
  dirname,
  h,
  mount,
  notice,
  plural,
  relPath,
  spinner,
  tagChips,
} from "./dom.js";
import { ask, choose, toast, toastDone, toastError } from "./dialogs.js";
import { DocTree } from "./doc-tree.js";
import { hitItem } from "./snippet.js";
import { navigate, routes } from "./router.js";
import { canWrite, docsChanged, folderByName, writeAction } from "./state.js";

const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
const SEARCH_DELAY_MS = 250;

export class FolderPane {
  constructor(host) {
    this.host = host;
    this.folder = null;
    this.docs = null;
    this.query = "";
    this.tag = "";
    this.hits = null;
    this.activePath = null;
    this.searchTimer = null;
    this.searchAbort = null;
    this.listAbort = null;
    this.tree = new DocTree({ onTag: (tag) => this.setTag(tag) });
    this.skipped = [];
    window.addEventListener("ragdown:docs-changed", (event) => {
      if (this.folder && event.detail.folder === this.folder) this.loadDocs();
    });
  }

  /** Shows the pane for `folder` (re-using it when it already shows that one). */
  show(folder, { activePath = null, activeLine = null, tag = null } = {}) {
    this.host.hidden = false;
    if (folder !== this.folder) {
      this.folder = folder;
      this.docs = null;
      this.tree = new DocTree({ onTag: (tag) => this.setTag(tag) });
      this.query = "";
      this.tag = tag || "";
      this.hits = null;
      this.build();
      this.loadDocs();
      if (this.tag) this.search();
    } else if (tag && tag !== this.tag) {
      this.setTag(tag);
    } else {
      this.renderHeader();
    }
    this.setActive(activePath, activeLine);
  }

  hide() {
    this.host.hidden = true;
  }

  /** The shared state changed (a folder's title or MCP switch, read-only): redraw the header. */
  onState() {
    if (this.folder && !this.host.hidden && this.headerEl) this.renderHeader();
  }

  /** The folder's documents, once loaded (for the editor's [[ completion). */
  documents() {
    return this.docs || [];
  }

  setTag(tag) {
    this.tag = tag || "";
    this.renderTagFilter();
    this.search();
  }

  focusSearch() {
    if (!this.host.hidden && this.searchInput) {
      this.searchInput.focus();
      this.searchInput.select();
    }
  }

  build() {
    this.headerEl = h("div", { class: "pane-head" });
    this.searchInput = h("input", {
      type: "search",
      id: "search-input",
      class: "search-input",
      placeholder: "Search this folder  ( / )",
      "aria-label": "Search this folder",
      autocomplete: "off",
      spellcheck: "false",
      oninput: () => this.scheduleSearch(),
      onkeydown: (event) => {
        if (event.key === "Escape" && this.searchInput.value) {
          event.preventDefault();
          this.searchInput.value = "";
          this.search();
        }
      },
    });
    this.tagFilterEl = h("div", { class: "tag-filter" });
    this.resultsEl = h("div", { class: "pane-results", id: "pane-results" });
    this.fileInput = h("input", {
      type: "file",
      multiple: true,
      accept: ".md,.markdown,.mdx,text/markdown",
      hidden: true,
      onchange: () => this.upload([...this.fileInput.files]),
    });
    mount(
      this.host,
      this.headerEl,
      h(
        "form",
        {
          class: "search-form",
          role: "search",
          onsubmit: (event) => {
            event.preventDefault();
            this.search();
          },
        },
        this.searchInput,
      ),
      this.tagFilterEl,
      this.resultsEl,
      this.fileInput,
    );
    this.renderHeader();
    this.renderTagFilter();
    this.renderResults();
  }

  renderHeader() {
    const folder = folderByName(this.folder);
    const title = folder ? folder.title : this.folder;
    mount(
      this.headerEl,
      h(
        "div",
        { class: "pane-title" },
        h("a", { href: routes.folder(this.folder), class: "pane-folder" }, title),
        folder ? badge(folder.mcp ? "MCP on" : "MCP off", folder.mcp ? "on" : "off") : null,
      ),
      h(
        "div",
        { class: "pane-actions" },
        writeAction(
          h(
            "button",
            { type: "button", class: "small", id: "upload-button", onclick: () => this.fileInput.click() },
            "Upload",
          ),
        ),
        writeAction(
          h(
            "button",
            {
              type: "button",
              class: "small primary",
              id: "new-document",
              title: "New document",
              "aria-label": "New document",
              onclick: () => newDocument(this.folder, this.activePath),
            },
            "+",
          ),
        ),
        h(
          "a",
          {
            class: "button small",
            id: "trash-link",
            href: routes.folderTrash(this.folder),
            title: "Deleted documents of this folder",
          },
          "Trash",
        ),
        h(
          "a",
          { class: "button small", href: routes.folderSettings(this.folder), title: "Folder settings" },
          "Settings",
        ),
      ),
    );
  }

  renderTagFilter() {
    mount(
      this.tagFilterEl,
      this.tag
        ? h(
            "span",
            { class: "tag-chip" },
            `#${this.tag}`,
            h(
              "button",
              {
                type: "button",
                class: "icon-button",
                "aria-label": `Remove the #${this.tag} filter`,
                onclick: () => this.setTag(""),
              },
              "×",
            ),
          )
        : null,
    );
  }

  async loadDocs() {
    if (this.listAbort) this.listAbort.abort();
    const abort = new AbortController();
    this.listAbort = abort;
    const folder = this.folder;
    if (!this.docs) this.renderResults();
    try {
      const answer = await api.docs(folder, abort.signal);
      if (abort.signal.aborted || folder !== this.folder) return;
      this.docs = (answer.docs || []).sort((a, b) => a.path.localeCompare(b.path));
      this.skipped = answer.skipped || [];
      this.docsError = null;
    } catch (err) {
      if (err.name === "AbortError") return;
      this.docs = [];
      this.docsError = err;
    }
    this.renderResults();
  }

  scheduleSearch() {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => this.search(), SEARCH_DELAY_MS);
  }

  async search() {
    clearTimeout(this.searchTimer);
    const query = this.searchInput.value.trim();
    this.query = query;
    if (this.searchAbort) this.searchAbort.abort();
    if (!query && !this.tag) {
      this.hits = null;
      this.renderResults();
      return;
    }
    const abort = new AbortController();
    this.searchAbort = abort;
    this.searching = true;
    this.renderResults();
    try {
      // A tag filter alone lists the tag's documents: search needs a query, so the tag is it.
      const answer = await api.search(
        { folder: this.folder, q: query || this.tag, tag: this.tag || undefined, top_k: 20 },
        abort.signal,
      );
      if (abort.signal.aborted) return;
      this.hits = answer.hits || [];
      this.searchError = null;
    } catch (err) {
      if (err.name === "AbortError") return;
      this.hits = [];
      this.searchError = err;
    }
    this.searching = false;
    this.renderResults();
  }

  /** Marks the open document in the list, or the hit it was opened from (same path and line). */
  setActive(path, line = this.activeLine) {
    this.activePath = path;
    this.activeLine = line || null;
    if (path && this.hits === null && this.docs && !this.tree.hasEntry(path)) this.tree.reveal(path);
    for (const item of this.resultsEl.querySelectorAll("[data-path]")) {
      const isHit = item.dataset.line !== undefined;
      const same = item.dataset.path === path && (!isHit || item.dataset.line === String(this.activeLine));
      item.classList.toggle("active", same);
      if (same) {
        item.setAttribute("aria-current", "page");
        scrollWithin(this.resultsEl, item);
      }
      else item.removeAttribute("aria-current");
    }
  }

  renderResults() {
    if (!this.resultsEl) return;
    if (this.hits !== null || this.searching) {
      mount(this.resultsEl, this.renderHits());
    } else {
      mount(this.resultsEl, this.renderDocs());
    }
    this.setActive(this.activePath);
  }

  renderHits() {
    if (this.searching) return spinner("Searching…");
    if (this.searchError) return notice("error", this.searchError.message);
    const hits = this.hits;
    const label = this.query ? `“${this.query}”` : `#${this.tag}`;
    if (!hits.length) return h("p", { class: "empty" }, `Nothing found for ${label}.`);
    return [
      h(
        "p",
        { class: "pane-count" },
        `${plural(hits.length, "hit")} for ${label}`,
        // The order is the fused rank's; the number shown is the cosine alone, so it need not fall down the list.
        h("span", { class: "pane-note" }, " · ranked by relevance; the number is each hit's cosine similarity"),
      ),
      h(
        "ol",
        { class: "hit-list", "aria-label": "Search results" },
        hits.map((hit) =>
          hitItem(hit, { query: this.query || this.tag, onTag: (tag) => this.setTag(tag), tagChips }),
        ),
      ),
    ];
  }

  renderDocs() {
    if (this.docs === null) return spinner();
    if (this.docsError) return notice("error", this.docsError.message);
    const docs = this.docs;
    if (!docs.length) {
      return h(
        "div",
        { class: "empty" },
        h("p", {}, "This folder has no documents yet."),
        writeAction(
          h(
            "button",
            { type: "button", class: "primary", onclick: () => newDocument(this.folder, null) },
            "New document",
          ),
        ),
        this.renderSkipped(),
      );
    }
    const treeHost = h("div", { class: "doc-tree-host" });
    this.tree.render(treeHost, docs, this.activePath);
    return [h("p", { class: "pane-count" }, plural(docs.length, "document")), treeHost, this.renderSkipped()];
  }

  /** The files the index left out (too large, not UTF-8, binary), each with its reason. */
  renderSkipped() {
    if (!this.skipped.length) return null;
    return h(
      "details",
      { class: "skipped-files", id: "skipped-files" },
      h("summary", {}, `${plural(this.skipped.length, "file")} not indexed`),
      h(
        "ul",
        {},
        this.skipped.map((item) =>
          h(
            "li",
            { dataset: { path: item.path } },
            h("span", { class: "doc-path" }, relPath(item.path)),
            h("span", { class: "skip-reason" }, item.reason),
          ),
        ),
      ),
    );
  }

  async upload(files) {
    this.fileInput.value = "";
    if (!canWrite()) return;
    let done = 0;
    let last = null; // the last answer: its `sync` says whether the index has the uploads yet
    for (const file of files) {
      if (!/\.(md|markdown|mdx)$/i.test(file.name)) {
        toast(`${file.name} is not Markdown (.md, .markdown, .mdx).`, "error");
        continue;
      }
      if (file.size > MAX_UPLOAD_BYTES) {
        toast(`${file.name} is larger than 4 MiB.`, "error");
        continue;
      }
      const path = `${this.folder}/${file.name}`;
      const text = await file.text();
      try {
        last = await api.saveDoc({ path, text });
        done += 1;
      } catch (err) {
        if (err instanceof ApiError && err.status === 409) {
          const replace = await choose({
            title: "Replace the file?",
            message: `${relPath(path)} already exists in this folder.`,
            choices: [
              { value: false, label: "Keep the existing one" },
              { value: true, label: "Replace it", kind: "danger" },
            ],
          });
          if (replace) {
            try {
              last = await api.saveDoc({ path, text, overwrite: true });
              done += 1;
            } catch (again) {
              toastError(again, file.name);
            }
          }
        } else {
          toastError(err, file.name);
        }
      }
    }
    if (done) {
      toastDone(`Uploaded ${plural(done, "document")}.`, last);
      docsChanged(this.folder);
    }
  }
}

/** Scrolls `box` (only: never the page, where the pane sits under the document on a phone) to show `item`. */
function scrollWithin(box, item) {
  const outer = box.getBoundingClientRect();
  const inner = item.getBoundingClientRect();
  if (inner.top < outer.top) box.scrollTop -= outer.top - inner.top;
  else if (inner.bottom > outer.bottom) box.scrollTop += Math.min(inner.bottom - outer.bottom, inner.top - outer.top);
}

/** A file name from a title: no path separators or characters that break wikilinks. */
export function fileNameFor(title) {
  return title
    .replace(/[\\/:*?"<>|#^[\]]/g, "-")
    .replace(/\s+/g, " ")
    .replace(/^[.\s-]+/, "")
    .trim();
}

/**
 * New document: asks a title and an optional subfolder (starting beside `besidePath`), writes
 * `# <title>` to `<subfolder>/<title>.md` without overwriting, and opens it in the editor. A taken
 * name offers to open that document instead.
 */
export async function newDocument(folder, besidePath = null, suggestedTitle = "") {
  const beside = besidePath && besidePath.startsWith(`${folder}/`) ? dirname(relPath(besidePath)) : "";
  const values = await ask({
    title: "New document",
    ok: "Create",
    fields: [
      { name: "title", label: "Title", value: suggestedTitle, required: true },
      {
        name: "subfolder",
        label: "Subfolder (optional)",
        value: beside,
        placeholder: "notes/projects",
        help: "Created if it does not exist.",
      },
    ],
    validate: ({ title, subfolder }) => {
      if (!fileNameFor(title)) return "Give the document a title.";
      if (subfolder.split("/").some((part) => part === ".." || part.startsWith("."))) {
        return "The subfolder cannot climb out or be a dot-folder.";
      }
      return null;
    },
  });
  if (!values) return null;
  const sub = values.subfolder.replace(/\\/g, "/").replace(/^\/+|\/+$/g, "");
  // A title typed as a file name ("Report.md") names the file; its heading is the title without it.
  const given = values.title.trim().match(/^(.*?)(\.(?:md|markdown|mdx))$/i);
  const title = given && given[1].trim() ? given[1].trim() : values.title;
  const extension = given && given[1].trim() ? given[2] : ".md";
  const path = `${folder}/${sub ? `${sub}/` : ""}${fileNameFor(title)}${extension}`;
  try {
    await api.saveDoc({ path, text: `# ${title}\n` });
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      const open = await choose({
        title: "That name is taken",
        message: `${relPath(path)} already exists.`,
        choices: [
          { value: false, label: "Cancel" },
          { value: true, label: "Open it", kind: "primary" },
        ],
      });
      if (open) navigate(routes.doc(path));
      return null;
    }
    toastError(err, "Could not create the document");
    return null;
  }
  docsChanged(folder);
  navigate(routes.edit(path));
  return path;
}
