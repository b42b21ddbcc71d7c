import type { ComponentChildren } from "preact";
import { linkProps, route } from "../router";
import { session } from "../session";

const NAV: [string, string, "viewer" | "editor" | "admin"][] = [
  ["/runs", "Runs", "viewer"],
  ["/workflows", "Workflows", "viewer"],
  ["/submit", "Submit", "editor"],
  ["/describe", "Describe", "editor"],
  ["/cache", "Cache", "viewer"],
  ["/admin", "Admin", "admin"],
];

/** The header (who is signed in, where) and the page. */
export function Shell({ children }: { children: ComponentChildren }) {
  const me = session.me.value;
  const here = "/" + (route().parts[0] ?? "");
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Couler</span>
        <nav aria-label="Main">
          {NAV.filter(([, , role]) => session.can(role)).map(([path, label]) => (
            <a {...linkProps(path)} aria-current={here === path ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who">
          {me ? (
            <>
              {me.subject} · tenant <strong>{me.tenant ?? "—"}</strong> · {me.platform_admin ? "platform admin" : me.role}
            </>
          ) : null}
          <button class="link" onClick={() => session.signOut()}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
