// Errors of the API as the portal shows them: the server's problem
// document (RFC 9457, `application/problem+json`) when there is one, or a
// plain description of what went wrong on the way.

/** One validation problem, at a JSON pointer into the request. */
export interface ProblemItem {
  path: string;
  code: string;
  message: string;
}

/** The fields of Couler's problem documents the portal reads. */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id?: string;
  path?: string;
  problems?: ProblemItem[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail || problem.title);
    this.name = "ApiError";
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
  }

  /** What a user reads: the detail, then each field problem on a line. */
  describe(): string {
    const lines = [this.problem.detail || this.problem.title];
    for (const p of this.problem.problems ?? []) {
      lines.push(`${p.path || "(request)"}: ${p.message}`);
    }
    return lines.join("\n");
  }
}

function isProblem(v: unknown): v is Problem {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.status === "number" && typeof o.code === "string" && typeof o.title === "string";
}

/**
 * The error of a response that is not 2xx: its problem document, or one
 * made from the status and body text when the body is something else (a
 * proxy's HTML page, say).
 */
export function problemFrom(status: number, statusText: string, contentType: string, body: string): ApiError {
  if (contentType.includes("json")) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (isProblem(parsed)) {
        return new ApiError({ ...parsed, detail: parsed.detail ?? "" });
      }
    } catch {
      // Not JSON after all: described below.
    }
  }
  const text = body.trim().slice(0, 300);
  return new ApiError({
    title: statusText || `HTTP ${status}`,
    status,
    code: status === 0 ? "network_error" : `http_${status}`,
    detail: text && !text.startsWith("<") ? text : `the server answered ${status} ${statusText}`.trim(),
  });
}
