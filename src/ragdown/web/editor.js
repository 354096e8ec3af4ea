// The Markdown source editor: a textarea with a Write/Preview switch, Ctrl/Cmd+S to save against
// the version that was opened, the conflict prompt when the file changed on disk meanwhile, `[[`
// completion from the folder's documents, a question before leaving unsaved changes, and the
// advisory lints the server answers a save with (never a refusal: the text is saved either way).

import { api, ApiError } from "./api.js";
import { basename, h, mount, notice, plural, relPath, spinner } from "./dom.js";
import { choose, confirmDialog, syncPending, toast, toastDone, toastError } from "./dialogs.js";
import { FileCache, fillPreview } from "./preview.js";
import { navigate, routes, setGuard } from "./router.js";
import { canWrite, docsChanged, READ_KEY_HINT, readOnly } from "./state.js";

export async function renderEditor(main, route, { signal, pane }) {
  const path = route.path;
  const folder = route.folder;
  mount(main, h("div", { class: "page editor-page" }, spinner()));
  if (!canWrite()) {
    // The editor typed in the address: nothing is offered that the server would refuse on save.
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h("h1", { tabindex: "-1" }, "Read-only"),
        notice(
          "info",
          readOnly() ? "The server is read-only: documents cannot be edited here." : READ_KEY_HINT,
        ),
        h("p", {}, h("a", { href: routes.doc(path), id: "back-to-document" }, "Back to the document")),
      ),
    );
    return {};
  }
  let doc;
  try {
    doc = await api.doc(path, signal);
  } catch (err) {
    if (err.name === "AbortError") return {};
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h("h1", { tabindex: "-1" }, "Could not open the document"),
        notice("error", err.message),
      ),
    );
    return {};
  }
  if (signal.aborted) return {};
  return new Editor(main, path, folder, doc, pane).mount();
}

class Editor {
  constructor(main, path, folder, doc, pane) {
    this.main = main;
    this.path = path;
    this.folder = folder;
    this.pane = pane;
    this.hash = doc.hash;
    this.savedText = doc.text;
    this.title = doc.title || basename(path);
    this.mode = "write";
    this.saving = false;
    this.files = new FileCache();
    this.previewAbort = null;
    this.onKeyDown = (event) => this.keyDown(event);
    this.onBeforeUnload = (event) => {
      if (this.dirty()) {
        event.preventDefault();
        event.returnValue = "";
      }
    };
  }

  mount() {
    this.textarea = h("textarea", {
      class: "source-editor",
      id: "editor-source",
      "aria-label": `Markdown source of ${relPath(this.path)}`,
      spellcheck: "false",
      autocapitalize: "off",
      autocomplete: "off",
      oninput: () => {
        this.updateState();
        this.completion.update();
      },
    });
    this.textarea.value = this.savedText;
    this.previewEl = h("article", { class: "preview editor-preview", id: "editor-preview", hidden: true });
    this.stateEl = h("span", { class: "save-state", id: "save-state", role: "status" });
    // The lints of the last save; a live region, so the list is read out when it comes.
    this.warningsEl = h("div", { class: "save-warnings", id: "save-warnings", "aria-live": "polite" });
    this.writeTab = h(
      "button",
      {
        type: "button",
        role: "tab",
        id: "tab-write",
        "aria-controls": "editor-source",
        onclick: () => this.setMode("write"),
      },
      "Write",
    );
    this.previewTab = h(
      "button",
      {
        type: "button",
        role: "tab",
        id: "tab-preview",
        "aria-controls": "editor-preview",
        onclick: () => this.setMode("preview"),
      },
      "Preview",
    );
    this.saveButton = h(
      "button",
      {
        type: "button",
        class: "primary",
        id: "save-button",
        title: "Save (Ctrl+S / ⌘S)",
        onclick: () => this.save(),
      },
      "Save",
    );
    const body = h("div", { class: "editor-body" }, this.textarea, this.previewEl);
    this.completion = new Completion(this.textarea, body, () => this.pane.documents());
    mount(
      this.main,
      h(
        "div",
        { class: "page editor-page" },
        h(
          "header",
          { class: "doc-head" },
          h(
            "div",
            { class: "doc-head-text" },
            h("h1", { tabindex: "-1" }, `Editing ${this.title}`),
            h("p", { class: "doc-path-line muted" }, `${this.folder} / ${relPath(this.path)}`),
          ),
          h(
            "div",
            { class: "doc-actions" },
            this.stateEl,
            this.saveButton,
            h(
              "button",
              { type: "button", id: "close-editor", onclick: () => navigate(routes.doc(this.path)) },
              "Close",
            ),
          ),
        ),
        this.warningsEl,
        h(
          "div",
          { class: "tabs", role: "tablist", "aria-label": "Editor mode" },
          this.writeTab,
          this.previewTab,
        ),
        body,
        h(
          "p",
          { class: "field-help" },
          "Markdown source: wikilinks, embeds and front matter stay exactly as written. Type [[ to link a document of this folder.",
        ),
      ),
    );
    this.setMode("write");
    this.updateState();
    window.addEventListener("keydown", this.onKeyDown, true);
    window.addEventListener("beforeunload", this.onBeforeUnload);
    setGuard(() => this.confirmLeave());
    this.textarea.focus();
    this.textarea.setSelectionRange(this.textarea.value.length, this.textarea.value.length);
    return { dispose: () => this.dispose() };
  }

  dispose() {
    window.removeEventListener("keydown", this.onKeyDown, true);
    window.removeEventListener("beforeunload", this.onBeforeUnload);
    setGuard(null);
    this.completion.close();
    this.files.dispose();
    if (this.previewAbort) this.previewAbort.abort();
  }

  dirty() {
    return this.textarea.value !== this.savedText;
  }

  updateState() {
    const dirty = this.dirty();
    this.stateEl.textContent = this.saving ? "Saving…" : dirty ? "Unsaved changes" : "Saved";
    this.stateEl.classList.toggle("dirty", dirty);
    this.saveButton.disabled = this.saving;
  }

  async confirmLeave() {
    if (!this.dirty()) return true;
    return confirmDialog({
      title: "Leave without saving?",
      message: `Your changes to ${relPath(this.path)} are not saved.`,
      ok: "Leave",
      cancel: "Keep editing",
      danger: true,
    });
  }

  keyDown(event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
      event.preventDefault();
      this.save();
    }
  }

  setMode(mode) {
    this.mode = mode;
    const preview = mode === "preview";
    this.writeTab.setAttribute("aria-selected", String(!preview));
    this.previewTab.setAttribute("aria-selected", String(preview));
    this.textarea.hidden = preview;
    this.previewEl.hidden = !preview;
    if (preview) {
      this.completion.close();
      this.renderPreview();
    } else {
      this.textarea.focus();
    }
  }

  async renderPreview() {
    if (this.previewAbort) this.previewAbort.abort();
    const abort = new AbortController();
    this.previewAbort = abort;
    mount(this.previewEl, spinner("Rendering…"));
    try {
      const answer = await api.render(this.path, this.textarea.value, abort.signal);
      if (abort.signal.aborted) return;
      fillPreview(this.previewEl, answer.html || "", {
        files: this.files,
        path: this.path,
        signal: abort.signal,
      });
    } catch (err) {
      if (err.name !== "AbortError") mount(this.previewEl, notice("error", err.message));
    }
  }

  async save() {
    if (this.saving) return;
    this.saving = true;
    this.updateState();
    const text = this.textarea.value;
    try {
      const answer = await api.saveDoc({ path: this.path, text, base_hash: this.hash });
      this.saved(text, answer);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.code === "changed") {
        await this.conflict(text, /was deleted since it was opened/.test(err.message || ""));
      } else {
        toastError(err, "Could not save");
      }
    } finally {
      this.saving = false;
      this.updateState();
    }
  }

  saved(text, answer) {
    this.hash = answer.hash;
    this.savedText = text;
    const warnings = Array.isArray(answer.warnings)
      ? answer.warnings.filter((warning) => typeof warning === "string")
      : [];
    this.showWarnings(warnings);
    if (!warnings.length || syncPending(answer)) toastDone("Saved.", answer, 2000);
    docsChanged(this.folder);
  }

  /** The lints of what was just saved, in a notice above the editor; none clears it. */
  showWarnings(warnings) {
    if (!warnings.length) {
      mount(this.warningsEl);
      return;
    }
    const dismiss = h(
      "button",
      {
        type: "button",
        class: "icon-button",
        id: "dismiss-warnings",
        "aria-label": "Dismiss the warnings",
        title: "Dismiss",
        onclick: () => {
          mount(this.warningsEl);
          if (this.mode === "write") this.textarea.focus();
        },
      },
      "×",
    );
    mount(
      this.warningsEl,
      notice(
        "warn",
        h(
          "div",
          { class: "save-warnings-head" },
          h("strong", {}, `Saved, with ${plural(warnings.length, "warning")}:`),
          dismiss,
        ),
        h("ul", { class: "save-warnings-list" }, warnings.map((warning) => this.warningItem(warning))),
        h("p", { class: "field-help" }, "Advisory only: the document is saved as written."),
      ),
    );
  }

  /** One warning; its `line N` a button that puts the caret on that line of the source. */
  warningItem(warning) {
    const match = /^line (\d+)(:\s*)([\s\S]*)$/.exec(warning);
    if (!match) return h("li", {}, warning);
    const line = Number(match[1]);
    return h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          class: "link-button",
          title: `Go to line ${line} of the source`,
          onclick: () => this.goToLine(line),
        },
        `line ${line}`,
      ),
      `${match[2]}${match[3]}`,
    );
  }

  goToLine(line) {
    if (this.mode !== "write") this.setMode("write");
    const lines = this.textarea.value.split("\n");
    const at = Math.min(Math.max(line, 1), lines.length) - 1;
    const start = lines.slice(0, at).reduce((sum, text) => sum + text.length + 1, 0);
    this.textarea.focus();
    this.textarea.setSelectionRange(start, start + lines[at].length);
    // Scroll the line into view, a third of the way down (measured, so wrapped lines count).
    const point = caretPoint(this.textarea, start);
    const top = this.textarea.scrollTop + point.top - this.textarea.clientHeight / 3;
    this.textarea.scrollTop = Math.max(0, top);
  }

  /**
   * The file changed on disk since it was opened (or, `gone`, was deleted): save over it (save it
   * again), discard this edit, or keep editing.
   */
  async conflict(text, gone = false) {
    const choice = await choose({
      title: gone
        ? "This file was deleted on disk since you opened it"
        : "This file changed on disk since you opened it",
      role: "alertdialog",
      message: gone
        ? "It was deleted elsewhere (Obsidian, an agent, git…) after you opened it. Save your text as it again, or discard your edit?"
        : "It was saved elsewhere (Obsidian, an agent, git…) after you opened it. Save over that version, or discard your edit and load it?",
      choices: [
        { value: null, label: "Keep editing" },
        { value: "discard", label: "Discard my edit", kind: "danger" },
        { value: "overwrite", label: gone ? "Save it again" : "Save over it", kind: "primary" },
      ],
    });
    if (choice === "overwrite") {
      try {
        const answer = await api.saveDoc({ path: this.path, text, overwrite: true });
        this.saved(text, answer);
      } catch (err) {
        toastError(err, "Could not save");
      }
    } else if (choice === "discard") {
      await this.reload();
    }
  }

  async reload() {
    try {
      const doc = await api.doc(this.path);
      this.hash = doc.hash;
      this.savedText = doc.text;
      this.textarea.value = doc.text;
      this.showWarnings([]);
      this.updateState();
      if (this.mode === "preview") this.renderPreview();
      toast("Loaded the version on disk.", "info", 2500);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        toast("The file is gone from disk.", "error");
        this.savedText = this.textarea.value;
        navigate(routes.folder(this.folder), { force: true });
        return;
      }
      toastError(err, "Could not reload");
    }
  }
}

// --- [[ completion ------------------------------------------------------------------------------

const OPEN_LINK = /\[\[([^[\]|#\n]*)$/;
const MAX_SUGGESTIONS = 8;

class Completion {
  constructor(textarea, host, documents) {
    this.textarea = textarea;
    this.host = host;
    this.documents = documents;
    this.items = [];
    this.index = 0;
    this.list = h("ul", { class: "completion", role: "listbox", id: "link-completion", hidden: true });
    host.append(this.list);
    textarea.setAttribute("aria-autocomplete", "list");
    textarea.setAttribute("aria-controls", "link-completion");
    textarea.addEventListener("keydown", (event) => this.keyDown(event));
    textarea.addEventListener("blur", () => setTimeout(() => this.close(), 150));
    textarea.addEventListener("click", () => this.update());
  }

  update() {
    const caret = this.textarea.selectionStart;
    if (caret !== this.textarea.selectionEnd) return this.close();
    const match = OPEN_LINK.exec(this.textarea.value.slice(Math.max(0, caret - 200), caret));
    if (!match) return this.close();
    this.start = caret - match[1].length;
    this.items = suggest(this.documents(), match[1]);
    if (!this.items.length) return this.close();
    this.index = 0;
    this.render();
    this.place();
    return undefined;
  }

  render() {
    mount(
      this.list,
      this.items.map((item, index) =>
        h(
          "li",
          {
            role: "option",
            id: `completion-${index}`,
            "aria-selected": String(index === this.index),
            class: index === this.index ? "selected" : undefined,
            onmousedown: (event) => {
              event.preventDefault();
              this.choose(index);
            },
          },
          h("span", { class: "completion-title" }, item.title),
          h("span", { class: "completion-path" }, item.rel),
        ),
      ),
    );
    this.list.hidden = false;
    this.textarea.setAttribute("aria-activedescendant", `completion-${this.index}`);
  }

  place() {
    const point = caretPoint(this.textarea, this.textarea.selectionStart);
    const top = this.textarea.offsetTop + point.top + point.height + 4;
    const left = Math.min(this.textarea.offsetLeft + point.left, this.host.clientWidth - 280);
    this.list.style.top = `${top}px`;
    this.list.style.left = `${Math.max(0, left)}px`;
  }

  keyDown(event) {
    if (this.list.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.index = (this.index + step + this.items.length) % this.items.length;
      this.render();
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      this.choose(this.index);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.close();
    }
  }

  choose(index) {
    const item = this.items[index];
    if (!item) return;
    const textarea = this.textarea;
    const caret = textarea.selectionStart;
    const closing = textarea.value.slice(caret, caret + 2) === "]]" ? "" : "]]";
    textarea.setRangeText(item.link + closing, this.start, caret, "end");
    if (!closing) {
      const after = this.start + item.link.length + 2;
      textarea.setSelectionRange(after, after);
    }
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
    this.close();
    textarea.focus();
  }

  close() {
    this.list.hidden = true;
    this.textarea.removeAttribute("aria-activedescendant");
  }
}

function stripExtension(path) {
  return path.replace(/\.(md|markdown|mdx)$/i, "");
}

/** The folder's documents matching what follows `[[`, each with the shortest link that names it. */
export function suggest(docs, typed) {
  const query = typed.trim().toLowerCase();
  const stems = new Map();
  for (const doc of docs) {
    const stem = basename(stripExtension(doc.path)).toLowerCase();
    stems.set(stem, (stems.get(stem) || 0) + 1);
  }
  const scored = [];
  for (const doc of docs) {
    const rel = relPath(doc.path);
    const stem = basename(stripExtension(rel));
    const title = doc.title || stem;
    const haystacks = [stem, stripExtension(rel), title, ...(doc.aliases || [])].map((text) =>
      text.toLowerCase(),
    );
    let score = -1;
    if (!query) score = 1;
    else if (haystacks[0].startsWith(query) || haystacks[2].startsWith(query)) score = 3;
    else if (haystacks.some((text) => text.includes(query))) score = 2;
    if (score < 0) continue;
    const link = stems.get(stem.toLowerCase()) === 1 ? stem : stripExtension(rel);
    scored.push({ score, title, rel, link });
  }
  scored.sort((a, b) => b.score - a.score || a.rel.length - b.rel.length || a.rel.localeCompare(b.rel));
  return scored.slice(0, MAX_SUGGESTIONS);
}

const MIRRORED = [
  "boxSizing",
  "width",
  "borderTopWidth",
  "borderRightWidth",
  "borderBottomWidth",
  "borderLeftWidth",
  "paddingTop",
  "paddingRight",
  "paddingBottom",
  "paddingLeft",
  "fontStyle",
  "fontVariant",
  "fontWeight",
  "fontSize",
  "lineHeight",
  "fontFamily",
  "letterSpacing",
  "wordSpacing",
  "tabSize",
  "textIndent",
];

/** Where the caret is inside a textarea, measured on a hidden copy of its text. */
function caretPoint(textarea, position) {
  const style = getComputedStyle(textarea);
  const mirror = document.createElement("div");
  for (const name of MIRRORED) mirror.style[name] = style[name];
  Object.assign(mirror.style, {
    position: "absolute",
    visibility: "hidden",
    whiteSpace: "pre-wrap",
    overflowWrap: "break-word",
    top: "0",
    left: "-9999px",
    overflow: "hidden",
  });
  mirror.textContent = textarea.value.slice(0, position);
  const marker = document.createElement("span");
  marker.textContent = "\u200b";
  mirror.append(marker);
  document.body.append(mirror);
  const point = {
    top: marker.offsetTop - textarea.scrollTop,
    left: marker.offsetLeft - textarea.scrollLeft,
    height: parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5,
  };
  mirror.remove();
  return point;
}
