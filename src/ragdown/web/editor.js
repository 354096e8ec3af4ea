// The Markdown source editor: CodeMirror (source.js, loaded on the first edit) with a Write/Preview
// switch, Ctrl/Cmd+S to save against the version that was opened, a notice as soon as the file changes
// on disk while editing, the three-way merge when it did (merge.js), `[[` completion from the folder's
// documents, a question before leaving unsaved changes, and the advisory lints the server answers a
// save with (never a refusal: the text is saved either way).

import { api, ApiError } from "./api.js";
import { basename, h, mount, notice, plural, relPath, spinner } from "./dom.js";
import { confirmDialog, syncPending, toast, toastDone, toastError } from "./dialogs.js";
import { ChangeWatch, resolveConflict } from "./merge.js";
import { FileCache, fillPreview } from "./preview.js";
import { Source } from "./source.js";
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
  let source;
  const host = h("div", { class: "source-host" });
  const editor = new Editor(main, path, folder, doc, pane);
  try {
    source = await Source.create({
      parent: host,
      text: doc.text,
      label: `Markdown source of ${relPath(path)}`,
      documents: () => pane.documents(),
      onChange: () => editor.updateState(),
    });
  } catch (err) {
    mount(
      main,
      h(
        "div",
        { class: "page" },
        h("h1", { tabindex: "-1" }, "Could not load the editor"),
        notice("error", `The editor's script did not load: ${err.message}`),
      ),
    );
    return {};
  }
  if (signal.aborted) {
    source.destroy();
    return {};
  }
  return editor.mount(source, host);
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

  mount(source, host) {
    this.source = source;
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
    // Shown as soon as the file changes on disk while editing (merge.js's ChangeWatch).
    this.changedEl = h("div", { class: "disk-changed", id: "disk-changed", "aria-live": "assertive" });
    const body = h("div", { class: "editor-body" }, host, this.previewEl);
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
        this.changedEl,
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
    this.watch = new ChangeWatch(this);
    this.source.select(this.source.value.length);
    return { dispose: () => this.dispose() };
  }

  dispose() {
    window.removeEventListener("keydown", this.onKeyDown, true);
    window.removeEventListener("beforeunload", this.onBeforeUnload);
    setGuard(null);
    this.watch.stop();
    this.source.destroy();
    this.files.dispose();
    if (this.previewAbort) this.previewAbort.abort();
  }

  dirty() {
    return this.source.value !== this.savedText;
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
    this.source.dom.hidden = preview;
    this.previewEl.hidden = !preview;
    if (preview) this.renderPreview();
    else this.source.focus();
  }

  async renderPreview() {
    if (this.previewAbort) this.previewAbort.abort();
    const abort = new AbortController();
    this.previewAbort = abort;
    mount(this.previewEl, spinner("Rendering…"));
    try {
      const answer = await api.render(this.path, this.source.value, abort.signal);
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
    const text = this.source.value;
    try {
      if (CONFLICT_MARK.test(text) && !(await this.confirmMarkers())) return;
      const answer = await api.saveDoc({ path: this.path, text, base_hash: this.hash });
      this.saved(text, answer);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.code === "changed") {
        await resolveConflict(this, text, /was deleted since it was opened/.test(err.message || ""));
      } else {
        toastError(err, "Could not save");
      }
    } finally {
      this.saving = false;
      this.updateState();
    }
  }

  /** The text still holds the marks of a merge's conflict: save it so anyway? */
  confirmMarkers() {
    return confirmDialog({
      title: "Save with conflict marks?",
      message:
        "The text still holds a merge's conflict marks (<<<<<<< … >>>>>>>). Save it with them, or keep editing to resolve them?",
      ok: "Save with the marks",
      cancel: "Keep editing",
    });
  }

  saved(text, answer) {
    this.hash = answer.hash;
    this.watch.settled(answer.hash);
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
          if (this.mode === "write") this.source.focus();
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
    this.source.goToLine(line);
  }

  async reload() {
    try {
      const doc = await api.doc(this.path);
      this.hash = doc.hash;
      this.watch.settled(doc.hash);
      this.savedText = doc.text;
      this.source.value = doc.text;
      this.showWarnings([]);
      this.updateState();
      if (this.mode === "preview") this.renderPreview();
      toast("Loaded the version on disk.", "info", 2500);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        toast("The file is gone from disk.", "error");
        this.savedText = this.source.value;
        navigate(routes.folder(this.folder), { force: true });
        return;
      }
      toastError(err, "Could not reload");
    }
  }
}

/** A line a three-way merge's conflict starts with (merge.js writes them). */
const CONFLICT_MARK = /^<{7} /m;
