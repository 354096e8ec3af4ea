// The vendored KaTeX (its CSS and fonts are copied beside it).
export { default } from "katex";
