import { render } from "preact";
import { App } from "./app";
import "./styles.css";

performance.mark("app-start");
render(<App />, document.getElementById("app")!);
