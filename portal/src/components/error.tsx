import { ApiError } from "../api/problem";

/** An error as the user reads it: the problem's detail, never a stack. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.describe() : String((error as Error).message ?? error);
  return (
    <div class="error" role="alert">
      {text.split("\n").map((line) => (
        <div>{line}</div>
      ))}
    </div>
  );
}
