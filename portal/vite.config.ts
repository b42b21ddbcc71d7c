import { defineConfig } from "vite";

// Served by couler-api under /ui/; `npm run dev` proxies the API to a
// running `couler up` (COULER_API, default http://127.0.0.1:8080).
export default defineConfig({
  base: "/ui/",
  oxc: {
    jsx: { runtime: "automatic", importSource: "preact" },
  },
  build: {
    outDir: "dist",
    assetsDir: "assets",
    target: "es2022",
    sourcemap: false,
    // The CSP allows no inline scripts or styles.
    assetsInlineLimit: 0,
  },
  worker: { format: "es" },
  server: {
    proxy: {
      "/v1": process.env.COULER_API ?? "http://127.0.0.1:8080",
    },
  },
});
