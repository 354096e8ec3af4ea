// The editor's Markdown source: CodeMirror 6 (web/vendor/codemirror.js, imported on the first edit),
// with Markdown highlighting, line wrapping, history, search, and `[[` completion from the folder's
// documents. Its editable element is `#editor-source`; `value`, `select` and `goToLine` are all the
// editor (editor.js) needs of it.

import { basename, relPath } from "./dom.js";

let loading = null;

/** The CodeMirror bundle, fetched once per page. */
export function codeMirror() {
  if (!loading) {
    loading = import("./vendor/codemirror.js");
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

export class Source {
  /**
   * `parent`: where the editor goes; `text`; `label` (its accessible name); `documents()`: the
   * folder's documents, for `[[`; `onChange()`: after every change of the text.
   */
  static async create({ parent, text, label, documents, onChange }) {
    const cm = await codeMirror();
    return new Source(cm, { parent, text, label, documents, onChange });
  }

  constructor(cm, { parent, text, label, documents, onChange }) {
    this.cm = cm;
    this.view = new cm.EditorView({
      parent,
      state: cm.EditorState.create({
        doc: text,
        extensions: [
          cm.basicSetup,
          cm.keymap.of([cm.indentWithTab]),
          cm.markdown({ base: cm.markdownLanguage }),
          cm.EditorView.lineWrapping,
          cm.autocompletion({ override: [linkCompletion(documents)], icons: false }),
          cm.EditorView.contentAttributes.of({
            id: "editor-source",
            "aria-label": label,
            spellcheck: "false",
            autocapitalize: "off",
            autocorrect: "off",
          }),
          cm.EditorView.updateListener.of((update) => {
            if (update.docChanged) onChange();
          }),
        ],
      }),
    });
    this.view.dom.classList.add("source-editor");
  }

  get dom() {
    return this.view.dom;
  }

  get value() {
    return this.view.state.doc.toString();
  }

  /** Replaces the whole text (one undoable change). */
  set value(text) {
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: text } });
  }

  focus() {
    this.view.focus();
  }

  /** Selects `from`–`to` (offsets in the text) and scrolls it into view, a third of the way down. */
  select(from, to = from) {
    this.view.dispatch({
      selection: { anchor: from, head: to },
      effects: this.cm.EditorView.scrollIntoView(from, { y: "start", yMargin: this.view.dom.clientHeight / 3 }),
    });
    this.view.focus();
  }

  /** Selects line `line` (1-based, clamped to the text). */
  goToLine(line) {
    const doc = this.view.state.doc;
    const found = doc.line(Math.min(Math.max(line, 1), doc.lines));
    this.select(found.from, found.to);
  }

  destroy() {
    this.view.destroy();
  }
}

// --- [[ completion ------------------------------------------------------------------------------

const OPEN_LINK = /\[\[[^[\]|#\n]*$/;
const MAX_SUGGESTIONS = 8;

/** A CodeMirror completion source: after `[[`, the documents matching what follows. */
function linkCompletion(documents) {
  return (context) => {
    const open = context.matchBefore(OPEN_LINK);
    if (!open) return null;
    const items = suggest(documents(), open.text.slice(2));
    if (!items.length) return null;
    return {
      from: open.from + 2,
      filter: false,
      options: items.map((item) => ({
        label: item.link,
        displayLabel: item.title,
        detail: item.rel,
        apply: (view, _completion, from, to) => {
          const closed = view.state.sliceDoc(to, to + 2) === "]]";
          const insert = closed ? item.link : `${item.link}]]`;
          view.dispatch({
            changes: { from, to, insert },
            selection: { anchor: from + item.link.length + 2 },
          });
        },
      })),
    };
  };
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
