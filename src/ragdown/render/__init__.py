"""Markdown to HTML for the web UI's preview: CommonMark plus tables, strikethrough, task lists and
Obsidian Flavored Markdown the way Obsidian shows it: wikilinks, embeds, `#tags`, callouts (`> [!tip]
Title`, foldable with `[!tip]-` / `[!tip]+`), `==highlights==`, footnotes (`[^1]`, `^[inline]`) and the
frontmatter as a table of properties.

Documents are untrusted, so raw HTML in them is escaped, never passed through, and markdown-it's
link validation (no `javascript:`, `vbscript:`, `file:` or non-image `data:` URLs) stays on. Links
are resolved while rendering, through callables the caller gives:

- `resolve_link(raw)` resolves a wikilink or embed target as written (`Note`, `Note#Heading`,
  `sub/Note`, an alias; no brackets, no `|shown`) to the folder-prefixed path of a document or
  attachment, or None;
- `resolve_relative(url)` resolves the URL of a relative Markdown link or image (`other.md`,
  `../img/a.png`, percent-encoded as markdown-it normalises it) only as a path relative to the
  document; it defaults to `resolve_link`;
- `file_url(path)` is the URL the UI loads an attachment from (`/api/file?path=…`).

`render_document` builds all three from a folder's `LinkResolver`.

A link to a document becomes `href="#/d/<path>"` (the UI's hash route, `?h=<heading>` for an
anchor) with `data-path`; a link to an attachment points at `file_url` with `data-file`; a link
that resolves to nothing gets the class `missing` and `data-target`. Every block element carries
`data-line`, the 1-based line of the source it starts on, so the UI can scroll to a search hit. A block
an Obsidian block id names (`text ^id`) carries `data-block="id"`, and a block embed (`![[Note#^id]]`)
carries the id it shows as `data-block` too: the UI shows that block of the note alone.

Footnote references and back-references are `href="#"` links with `data-footnote` /
`data-footnote-back` (no element ids, so an embedded note's footnotes never clash with the host's);
the UI scrolls to `[data-footnote-id]` / `[data-footnote-ref]` within the same document.
"""
