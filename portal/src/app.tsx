import { useEffect } from "preact/hooks";
import { get } from "./api/client";
import { ErrorBox } from "./components/error";
import { Login } from "./pages/login";
import { RunPage } from "./pages/run";
import { Runs } from "./pages/runs";
import { Admin } from "./pages/admin";
import { CachePage } from "./pages/cache";
import { Compare } from "./pages/compare";
import { Describe } from "./pages/describe";
import { Shell } from "./pages/shell";
import { Submit } from "./pages/submit";
import { WorkflowPage, Workflows } from "./pages/workflows";
import { navigate, route } from "./router";
import { type Me, session } from "./session";

export function App() {
  const { parts } = route();
  const token = session.token.value;
  const me = session.me.value;

  useEffect(() => {
    if (token && !me) {
      get<Me>("/v1/me")
        .then((m) => (session.me.value = m))
        .catch(() => {});
    }
  }, [token]);

  if (!token || parts[0] === "login") {
    if (token && parts[0] === "login") navigate("/runs", true);
    else if (!token && parts[0] !== "login") {
      const here = location.pathname.replace(/^\/ui/, "") + location.search;
      navigate(`/login?next=${encodeURIComponent(here)}`, true);
    }
    return <Login />;
  }
  if (!me) return <p aria-busy="true">Signing in…</p>;

  let page;
  switch (parts[0] ?? "runs") {
    case "runs":
      page = parts[1] ? <RunPage id={parts[1]} /> : <Runs />;
      break;
    case "workflows":
      page = parts[1] ? <WorkflowPage name={parts[1]} /> : <Workflows />;
      break;
    case "submit":
      page = <Submit />;
      break;
    case "describe":
      page = <Describe />;
      break;
    case "compare":
      page = <Compare />;
      break;
    case "cache":
      page = <CachePage />;
      break;
    case "admin":
      page = <Admin />;
      break;
    default:
      page = <ErrorBox error={new Error(`There is no page at /ui/${parts.join("/")}.`)} />;
  }
  return <Shell>{page}</Shell>;
}
