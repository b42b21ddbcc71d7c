// The portal's one way to call the API: the caller's token on every
// request, JSON in and out, problem documents as `ApiError`s.

import type { components } from "./schema";
import { ApiError, problemFrom } from "./problem";
import { session } from "../session";

export type Schemas = components["schemas"];
export type RunView = Schemas["RunView"];
export type StepView = Schemas["StepView"];
export type RunStatus = Schemas["RunStatus"];
export type StepStatus = Schemas["StepStatus"];

/** Headers that authenticate the caller. */
export function authHeaders(): Record<string, string> {
  const token = session.token.value;
  return token ? { Authorization: `Bearer ${token}` } : {};
}

export interface CallOptions {
  body?: unknown;
  /** Extra headers, e.g. `Idempotency-Key`. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Read the body as text instead of JSON. */
  text?: boolean;
}

/** Calls the API; a 401 signs the caller out. */
export async function call<T>(method: string, path: string, o: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(), ...o.headers };
  if (o.body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      signal: o.signal,
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError({
      title: "Network error",
      status: 0,
      code: "network_error",
      detail: `cannot reach the server: ${(e as Error).message}`,
    });
  }
  if (!response.ok) {
    const error = problemFrom(
      response.status,
      response.statusText,
      response.headers.get("content-type") ?? "",
      await response.text(),
    );
    if (response.status === 401) session.signOut(error.describe());
    throw error;
  }
  if (response.status === 204) return undefined as T;
  return (o.text ? await response.text() : await response.json()) as T;
}

export const get = <T>(path: string, o?: CallOptions) => call<T>("GET", path, o);
export const post = <T>(path: string, body?: unknown, o?: CallOptions) => call<T>("POST", path, { ...o, body });

/** A query string of the defined values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
