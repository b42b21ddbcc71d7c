import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { call, get, post, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";
import { session } from "../session";
import { when } from "../status";

type Key = Schemas["ApiKeyView"];

/** API keys, quotas and secret names for tenant admins; tenants for platform admins. */
export function Admin() {
  const keys = useSignal<Key[] | null>(null);
  const quotas = useSignal<Schemas["QuotasView"] | null>(null);
  const secrets = useSignal<Schemas["SecretView"][] | null>(null);
  const tenants = useSignal<Schemas["TenantView"][] | null>(null);
  const error = useSignal<unknown>(null);
  const created = useSignal<string | null>(null);
  const name = useSignal("");
  const role = useSignal<Schemas["Role"]>("viewer");
  const revoking = useSignal<string | null>(null);
  const me = session.me.value;

  const load = () => {
    if (me?.tenant) {
      get<Key[]>("/v1/api-keys").then((k) => (keys.value = k), (e) => (error.value = e));
      get<Schemas["QuotasView"]>("/v1/quotas").then((q) => (quotas.value = q), () => {});
      get<Schemas["List_SecretView"]>("/v1/secrets").then((s) => (secrets.value = s.items), () => {});
    }
    if (me?.platform_admin) get<Schemas["TenantView"][]>("/v1/tenants").then((t) => (tenants.value = t), (e) => (error.value = e));
  };
  useEffect(load, []);

  async function create(e: Event) {
    e.preventDefault();
    error.value = null;
    try {
      const k = await post<Schemas["CreatedApiKey"]>("/v1/api-keys", { name: name.value, roles: [role.value] });
      created.value = k.secret;
      name.value = "";
      load();
    } catch (err) {
      error.value = err;
    }
  }

  async function revoke(id: string) {
    revoking.value = null;
    try {
      await call("DELETE", `/v1/api-keys/${encodeURIComponent(id)}`);
      load();
    } catch (err) {
      error.value = err;
    }
  }

  return (
    <section>
      <h1>Administration</h1>
      <ErrorBox error={error.value} />
      {me?.tenant && (
        <>
          <h2>API keys</h2>
          <form class="filters" onSubmit={create}>
            <label>
              Name
              <input required value={name.value} onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Role
              <select value={role.value} onChange={(e) => (role.value = (e.target as HTMLSelectElement).value as Schemas["Role"])}>
                <option value="viewer">viewer</option>
                <option value="editor">editor</option>
                <option value="admin">admin</option>
              </select>
            </label>
            <button type="submit">Create key</button>
          </form>
          {created.value && (
            <div class="confirm" role="status">
              <p>
                The new key, shown only now: <code class="secret">{created.value}</code>
              </p>
              <button class="secondary" onClick={() => navigator.clipboard?.writeText(created.value ?? "")}>
                Copy
              </button>
              <button class="secondary" onClick={() => (created.value = null)}>
                Done
              </button>
            </div>
          )}
          {keys.value && (
            <table class="grid">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Roles</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col"></th>
                </tr>
              </thead>
              <tbody>
                {keys.value.map((k) => (
                  <tr>
                    <td>{k.name}</td>
                    <td class="mono">{k.prefix}…</td>
                    <td>{k.roles.join(", ")}</td>
                    <td>{when(k.created_at)}</td>
                    <td>{when(k.last_used_at)}</td>
                    <td>
                      {k.revoked_at ? (
                        `revoked ${when(k.revoked_at)}`
                      ) : revoking.value === k.id ? (
                        <>
                          <button class="danger" onClick={() => revoke(k.id)}>
                            Yes, revoke
                          </button>{" "}
                          <button class="secondary" onClick={() => (revoking.value = null)}>
                            No
                          </button>
                        </>
                      ) : (
                        <button class="secondary" onClick={() => (revoking.value = k.id)}>
                          Revoke…
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {quotas.value && (
            <>
              <h2>Quotas</h2>
              <dl class="facts">
                <dt>Concurrent runs</dt>
                <dd>{quotas.value.max_concurrent_runs}</dd>
                <dt>Queued runs</dt>
                <dd>{quotas.value.max_queued_runs}</dd>
                <dt>Requests per second</dt>
                <dd>{quotas.value.requests_per_second}</dd>
              </dl>
            </>
          )}
          {secrets.value && (
            <>
              <h2>Secrets</h2>
              <p class="hint">Names and keys only: values are never shown. Set them with `couler secrets set`.</p>
              <table class="grid">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Keys</th>
                    <th scope="col">Version</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {secrets.value.map((s) => (
                    <tr>
                      <td>{s.name}</td>
                      <td>{s.keys.join(", ")}</td>
                      <td>{s.version}</td>
                      <td>
                        {when(s.updated_at)} by {s.updated_by}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </>
      )}
      {tenants.value && (
        <>
          <h2>Tenants</h2>
          <table class="grid">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Engine</th>
                <th scope="col">Shares cache</th>
                <th scope="col">Concurrent runs</th>
              </tr>
            </thead>
            <tbody>
              {tenants.value.map((t) => (
                <tr>
                  <td>{t.display_name}</td>
                  <td class="mono">{t.id}</td>
                  <td>{t.engine}</td>
                  <td>{t.share_cache ? "yes" : "no"}</td>
                  <td>{t.quotas.max_concurrent_runs}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
