// What several views share: the server status and the folder list, refreshed on demand and by a
// slow poll, with listeners for whoever shows them.

import { api } from "./api.js";
import { h } from "./dom.js";

export const state = {
  status: null,
  folders: [],
  looseFiles: [],
  foldersLoaded: false,
};

const listeners = new Set();

export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function emit() {
  for (const listener of listeners) listener(state);
}

export function readOnly() {
  return Boolean(state.status && state.status.read_only);
}

/** Signed in with a key of the read role: the documents are shown, their changes are not offered. */
export function readKey() {
  const access = state.status && state.status.access;
  return Boolean(access && access.role === "read");
}

/** Whether the caller may change documents: not on a read-only server, not with a read key. */
export function canWrite() {
  return !readOnly() && !readKey();
}

export const READ_KEY_HINT =
  "Your key only reads: editing, uploading, renaming, deleting and restoring documents need a key with the write role.";

/**
 * A control that changes documents, as this caller gets it: itself when they may write; nothing on a
 * read-only server (hidden, as there); for a read key shown but not offered: disabled, saying why.
 * A link (Edit) becomes a disabled button, so neither a click nor its access key opens the editor.
 */
export function writeAction(control) {
  if (readOnly()) return null;
  if (!readKey()) return control;
  const shown =
    control.tagName === "BUTTON"
      ? control
      : h(
          "button",
          { type: "button", class: [...control.classList].filter((name) => name !== "button") },
          control.textContent,
        );
  if (control.id) shown.id = control.id;
  shown.removeAttribute("accesskey");
  shown.disabled = true;
  shown.title = READ_KEY_HINT;
  return shown;
}

/** Whether the caller may change what only the admin may: server and folder settings, folders, keys. */
export function isAdmin() {
  const status = state.status;
  if (!status) return false;
  if (status.access) return Boolean(status.access.admin);
  return status.auth_required === false; // an open server (SECURE_LOCAL_NET), no key given
}

export function authRequired() {
  return !state.status || state.status.auth_required !== false;
}

export function folderByName(name) {
  return state.folders.find((folder) => folder.name === name) || null;
}

export async function refreshStatus() {
  state.status = await api.status();
  emit();
  return state.status;
}

export async function refreshFolders() {
  const answer = await api.folders();
  state.folders = answer.folders || [];
  state.looseFiles = answer.loose_files || [];
  state.foldersLoaded = true;
  emit();
  return state.folders;
}

/** Replaces one folder in the list after a PATCH answered with it. */
export function updateFolder(folder, oldName = folder.name) {
  const at = state.folders.findIndex((item) => item.name === oldName);
  if (at < 0) state.folders.push(folder);
  else state.folders[at] = folder;
  state.folders.sort((a, b) => a.name.localeCompare(b.name));
  emit();
}

// Views announce document changes (saves, moves, deletes) so lists reload.
export function docsChanged(folder) {
  window.dispatchEvent(new CustomEvent("ragdown:docs-changed", { detail: { folder } }));
}
