// The vendored Mermaid: one ES module, its diagram types inlined (no chunks to serve).
export { default } from "mermaid";
