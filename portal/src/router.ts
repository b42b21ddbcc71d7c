// Paths under /ui/ in the address bar (so links can be shared), read into
// a signal; `navigate` pushes history without reloading.

import { signal } from "@preact/signals";

export const BASE = "/ui";

function current(): URL {
  return new URL(location.href);
}

export const location_ = signal<URL>(current());

window.addEventListener("popstate", () => (location_.value = current()));

/** Goes to `path` (relative to /ui, with an optional query). */
export function navigate(path: string, replace = false) {
  const url = BASE + (path.startsWith("/") ? path : `/${path}`);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  location_.value = current();
  window.scrollTo(0, 0);
}

/** The route: path segments below /ui and the query. */
export function route(): { parts: string[]; query: URLSearchParams } {
  const url = location_.value;
  const path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), query: url.searchParams };
}

/** Replaces the query (filters) of the current page. */
export function setQuery(params: Record<string, string | undefined>) {
  const url = current();
  for (const [k, v] of Object.entries(params)) {
    if (v) url.searchParams.set(k, v);
    else url.searchParams.delete(k);
  }
  history.replaceState(null, "", url);
  location_.value = current();
}

/** An in-app link: a real `<a href>` (middle-click works) that navigates. */
export function linkProps(path: string) {
  return {
    href: BASE + path,
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
