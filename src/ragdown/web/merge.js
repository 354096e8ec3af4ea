// When the file changed on disk while it was being edited: a notice as soon as it does (ChangeWatch
// polls the document's hash), and, on saving or from that notice, the conflict dialog: what changed on
// disk since the editor opened it, and a three-way merge of the editor's text (yours), the file on disk
// (theirs) and the version the editor opened (their common version: the editor keeps the text that goes
// with the hash it opened or last saved, so the merge needs neither the version history, which may be off
// or may never have seen that version, nor another request).
// A clean merge is saved against the new hash; one with conflicts goes into the editor with Git's
// marks to resolve. Nothing is ever overwritten silently: "Save over it" is asked for, never focused.

import { api, ApiError } from "./api.js";
import { h, mount, notice, plural, relPath } from "./dom.js";
import { choose, toast, toastError } from "./dialogs.js";
import { codeMirror } from "./source.js";

const POLL_MS = 2000;
const CONTEXT = 2;

/** Polls the document while it is edited; shows the editor's `changedEl` notice when its hash moves. */
export class ChangeWatch {
  constructor(editor) {
    this.editor = editor;
    this.shown = null;
    this.busy = false;
    this.abort = new AbortController();
    this.timer = setInterval(() => this.check(), POLL_MS);
  }

  stop() {
    clearInterval(this.timer);
    this.abort.abort();
  }

  /** The editor's hash is the file's again (saved, merged, reloaded): the notice goes. */
  settled(hash) {
    this.shown = null;
    if (hash) mount(this.editor.changedEl);
  }

  async check() {
    const editor = this.editor;
    if (this.busy || editor.saving || document.hidden) return;
    this.busy = true;
    const asked = editor.hash;
    try {
      const doc = await api.doc(editor.path, this.abort.signal);
      if (editor.hash === asked && doc.hash !== asked && doc.hash !== this.shown) this.show(doc.hash, false);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && editor.hash === asked && this.shown !== "gone") {
        this.show("gone", true);
      }
    } finally {
      this.busy = false;
    }
  }

  show(hash, gone) {
    const editor = this.editor;
    this.shown = hash;
    const dirty = editor.dirty();
    const action = h(
      "button",
      {
        type: "button",
        class: "small",
        id: "disk-changed-action",
        onclick: () => (dirty || gone ? resolveConflict(editor, editor.source.value, gone) : editor.reload()),
      },
      gone ? "Decide what to do" : dirty ? "Review and merge" : "Load the new version",
    );
    mount(
      editor.changedEl,
      notice(
        "warn",
        h(
          "p",
          {},
          gone
            ? "This file was deleted on disk while you were editing it. "
            : `This file changed on disk while you were editing it${dirty ? "; your edit is not saved" : ""}. `,
          action,
        ),
      ),
    );
  }
}

const lines = (text) => text.split("\n");

/** node-diff3's merge of `yours` and `theirs` from `base`: the text, with the conflicts marked. */
export function mergeTexts(cm, yours, base, theirs) {
  const out = [];
  let conflicts = 0;
  for (const region of cm.diff3Merge(lines(yours), lines(base), lines(theirs))) {
    if (region.ok) {
      out.push(...region.ok);
      continue;
    }
    conflicts += 1;
    const { a, o, b } = region.conflict;
    out.push("<<<<<<< yours", ...a, "||||||| when you opened it", ...o, "=======", ...b, ">>>>>>> on disk");
  }
  return { text: out.join("\n"), conflicts };
}

/** The lines `from` → `to` changes, as the history's diff view shows them (a few lines of context). */
function changesView(cm, from, to, label) {
  const rows = [];
  let added = 0;
  let removed = 0;
  const parts = cm.diffComm(lines(from), lines(to));
  parts.forEach((part, index) => {
    if (part.common) {
      const common = part.common;
      const head = index > 0 ? common.slice(0, CONTEXT) : [];
      const tail = index < parts.length - 1 ? common.slice(-CONTEXT) : [];
      const skipped = common.length - head.length - tail.length;
      for (const line of head) rows.push(h("span", { class: "diff-line diff-ctx" }, ` ${line}`));
      if (skipped > 0 && (head.length || tail.length)) {
        rows.push(h("span", { class: "diff-line diff-hunk" }, `… ${plural(skipped, "line")} unchanged`));
      }
      if (skipped >= 0) for (const line of tail) rows.push(h("span", { class: "diff-line diff-ctx" }, ` ${line}`));
      return;
    }
    for (const line of part.buffer1) {
      removed += 1;
      rows.push(h("span", { class: "diff-line diff-del" }, `-${line}`));
    }
    for (const line of part.buffer2) {
      added += 1;
      rows.push(h("span", { class: "diff-line diff-add" }, `+${line}`));
    }
  });
  return h(
    "section",
    { class: "diff-view conflict-diff", id: "conflict-diff", "aria-label": label },
    h(
      "div",
      { class: "diff-head" },
      h("h3", {}, label),
      h(
        "span",
        { class: "diff-stat" },
        h("span", { class: "diff-stat-add", title: "Lines added" }, `+${added}`),
        " ",
        h("span", { class: "diff-stat-del", title: "Lines removed" }, `−${removed}`),
      ),
    ),
    h("pre", { class: "diff diff-body", tabindex: "0" }, rows),
  );
}

/** The file changed (or, `gone`, was deleted) on disk since the editor opened it: ask, then act. */
export async function resolveConflict(editor, text, gone = false) {
  let theirs = null;
  if (!gone) {
    try {
      theirs = await api.doc(editor.path);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        toastError(err, "Could not read the file on disk");
        return;
      }
    }
  }
  if (!theirs) {
    await deleted(editor, text);
    return;
  }
  const cm = await codeMirror();
  const base = editor.savedText;
  const merged = mergeTexts(cm, text, base, theirs.text);
  const choices = [
    { value: null, label: "Keep editing" },
    { value: "discard", label: "Discard my edit", kind: "danger" },
    { value: "overwrite", label: "Save over it" },
  ];
  choices.push({
    value: "merge",
    label: merged.conflicts ? "Merge, then resolve" : "Merge and save",
    kind: "primary",
  });
  const outcome = merged.conflicts
      ? `Merging keeps both sets of changes but ${plural(merged.conflicts, "place")} changed on both sides: the editor marks ${merged.conflicts === 1 ? "it" : "them"} (<<<<<<< yours … >>>>>>> on disk) for you to resolve, then save.`
      : "Your changes and these do not overlap: merging keeps both and saves the result.";
  const choice = await choose({
    title: "This file changed on disk since you opened it",
    role: "alertdialog",
    message: `It was saved elsewhere (Obsidian, an agent, git…) after you opened ${relPath(editor.path)}.`,
    details: h(
      "div",
      { class: "conflict-details" },
      changesView(cm, base, theirs.text, "What changed on disk since you opened it"),
      h("p", { id: "merge-outcome" }, outcome),
    ),
    choices,
  });
  if (choice === "discard") {
    await editor.reload();
  } else if (choice === "overwrite") {
    await saveAgainst(editor, text, theirs.hash);
  } else if (choice === "merge") {
    editor.hash = theirs.hash;
    editor.watch.settled(theirs.hash);
    editor.savedText = theirs.text;
    if (editor.mode !== "write") editor.setMode("write");
    editor.source.value = merged.text;
    editor.updateState();
    if (merged.conflicts) {
      editor.source.select(merged.text.indexOf("<<<<<<< yours"));
      toast(`Merged: resolve ${plural(merged.conflicts, "conflict")}, then save.`, "info", 4000);
    } else {
      await saveAgainst(editor, merged.text, theirs.hash);
    }
  }
}

/** Saves `text` against `hash` (the version on disk the dialog showed); a newer change asks again. */
async function saveAgainst(editor, text, hash) {
  try {
    const answer = await api.saveDoc({ path: editor.path, text, base_hash: hash });
    editor.saved(text, answer);
  } catch (err) {
    if (err instanceof ApiError && err.status === 409 && err.code === "changed") {
      editor.hash = hash;
      await resolveConflict(editor, text, /was deleted since it was opened/.test(err.message || ""));
    } else {
      toastError(err, "Could not save");
    }
  } finally {
    editor.updateState();
  }
}

async function deleted(editor, text) {
  const choice = await choose({
    title: "This file was deleted on disk since you opened it",
    role: "alertdialog",
    message:
      "It was deleted elsewhere (Obsidian, an agent, git…) after you opened it. Save your text as it again, or discard your edit?",
    choices: [
      { value: null, label: "Keep editing" },
      { value: "discard", label: "Discard my edit", kind: "danger" },
      { value: "again", label: "Save it again", kind: "primary" },
    ],
  });
  if (choice === "again") {
    try {
      const answer = await api.saveDoc({ path: editor.path, text, overwrite: true });
      editor.saved(text, answer);
    } catch (err) {
      toastError(err, "Could not save");
    }
  } else if (choice === "discard") {
    await editor.reload();
  }
}
