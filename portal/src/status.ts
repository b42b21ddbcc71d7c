// How a status looks: colour, an icon and a word, never colour alone.

export interface Look {
  label: string;
  icon: string;
  /** Fill of a graph node or badge; text on it is white (contrast >= 4.5:1). */
  fill: string;
}

const LOOKS: Record<string, Look> = {
  queued: { label: "queued", icon: "…", fill: "#5b6573" },
  planning: { label: "planning", icon: "…", fill: "#5b6573" },
  pending: { label: "pending", icon: "○", fill: "#5b6573" },
  running: { label: "running", icon: "▶", fill: "#1f5fbf" },
  succeeded: { label: "succeeded", icon: "✓", fill: "#1e7a3c" },
  failed: { label: "failed", icon: "✕", fill: "#b3261e" },
  cancelled: { label: "cancelled", icon: "⊘", fill: "#8a4b00" },
  skipped: { label: "skipped", icon: "↷", fill: "#6b5b95" },
  cached: { label: "cached", icon: "◆", fill: "#0b6e75" },
};

export function look(status: string): Look {
  return LOOKS[status] ?? { label: status, icon: "?", fill: "#5b6573" };
}

export const TERMINAL_RUN = new Set(["succeeded", "failed", "cancelled"]);

/** `1h 2m`, `3m 4s`, `5.2s`, `120 ms`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.round(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** Milliseconds between two timestamps (or until now). */
export function between(from?: string | null, to?: string | null): number | null {
  if (!from) return null;
  const end = to ? Date.parse(to) : Date.now();
  return end - Date.parse(from);
}

export function when(t?: string | null): string {
  if (!t) return "—";
  const d = new Date(t);
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** How a cache verdict (`not_needed`) reads in a sentence (`not needed`). */
export function cacheWords(status: string): string {
  return status.replace("_", " ");
}
