import { useSignal } from "@preact/signals";
import { get } from "../api/client";
import { ErrorBox } from "../components/error";
import { navigate, route } from "../router";
import { type Me, session } from "../session";

/** Paste an API key (`ck_…`) or a JWT; `GET /v1/me` checks it. */
export function Login() {
  const token = useSignal("");
  const remember = useSignal(false);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);

  async function submit(e: Event) {
    e.preventDefault();
    busy.value = true;
    error.value = null;
    const value = token.value.trim();
    try {
      // Checked before it is kept: a refused token never signs anyone in.
      const me = await get<Me>("/v1/me", { headers: { Authorization: `Bearer ${value}` } });
      session.signIn(value, remember.value);
      session.me.value = me;
      const back = route().query.get("next");
      navigate(back && back.startsWith("/") ? back : "/runs", true);
    } catch (err) {
      error.value = err;
    } finally {
      busy.value = false;
    }
  }

  return (
    <main class="login">
      <h1>Couler</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <label for="token">API key or token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={token.value}
          onInput={(e) => (token.value = (e.target as HTMLInputElement).value)}
        />
        <p id="login-help" class="hint">
          An API key (<code>ck_…</code>) or a JWT. It stays in this tab (session storage) unless you tick below; it is
          never put in a cookie or a URL.
        </p>
        <label class="check">
          <input
            type="checkbox"
            checked={remember.value}
            onChange={(e) => (remember.value = (e.target as HTMLInputElement).checked)}
          />
          Remember on this device
        </label>
        <button type="submit" disabled={busy.value}>
          {busy.value ? "Signing in…" : "Sign in"}
        </button>
        {session.reason.value && !error.value && <p class="hint">Signed out: {session.reason.value}</p>}
        <ErrorBox error={error.value} />
      </form>
    </main>
  );
}
