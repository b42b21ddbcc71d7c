// Who is signed in: the token lives in memory and in sessionStorage (gone
// when the tab closes), never in a cookie or a URL; "remember on this
// device" keeps it in localStorage instead.

import { signal } from "@preact/signals";

const KEY = "couler.token";

function stored(): string | null {
  try {
    return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** What `GET /v1/me` says of the caller. */
export interface Me {
  subject: string;
  tenant: string | null;
  role: "viewer" | "editor" | "admin" | null;
  platform_admin: boolean;
}

const ROLE_RANK = { viewer: 1, editor: 2, admin: 3 } as const;

export const session = {
  token: signal<string | null>(stored()),
  me: signal<Me | null>(null),
  /** Why the caller was signed out, for the login page. */
  reason: signal<string | null>(null),

  signIn(token: string, remember: boolean) {
    this.token.value = token;
    this.reason.value = null;
    try {
      sessionStorage.setItem(KEY, token);
      if (remember) localStorage.setItem(KEY, token);
      else localStorage.removeItem(KEY);
    } catch {
      // Storage may be off (private mode): memory only.
    }
  },

  signOut(reason?: string) {
    this.token.value = null;
    this.me.value = null;
    this.reason.value = reason ?? null;
    try {
      sessionStorage.removeItem(KEY);
      localStorage.removeItem(KEY);
    } catch {
      // As above.
    }
  },

  /** Whether the caller's role is at least `role` in its tenant. */
  can(role: keyof typeof ROLE_RANK): boolean {
    const me = this.me.value;
    if (!me) return false;
    if (me.platform_admin) return true;
    return me.role !== null && ROLE_RANK[me.role] >= ROLE_RANK[role];
  },
};
