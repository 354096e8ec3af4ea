// The vendored CodeMirror 6 of the editor: the basic setup, Markdown highlighting,
// autocompletion (for `[[`), and node-diff3's three-way merge and line diff (for a conflict).
export { basicSetup, EditorView } from "codemirror";
export { EditorState } from "@codemirror/state";
export { keymap } from "@codemirror/view";
export { markdown, markdownLanguage } from "@codemirror/lang-markdown";
export { autocompletion } from "@codemirror/autocomplete";
export { indentWithTab } from "@codemirror/commands";
export { diff3Merge, diffComm } from "node-diff3";
