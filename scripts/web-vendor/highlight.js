// The vendored highlight.js with its common languages (about 40: the usual ones of notes).
export { default } from "highlight.js/lib/common";
