// What several views share: the server status and the folder list, refreshed on demand and by a
// slow poll, with listeners for whoever shows them.

import { api } from "./api.js";

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
