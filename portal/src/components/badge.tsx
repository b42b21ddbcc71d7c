import { look } from "../status";

/** A status as a coloured badge with its icon and word. */
export function Badge({ status }: { status: string }) {
  const l = look(status);
  return (
    <span class="badge" style={{ background: l.fill }}>
      <span aria-hidden="true">{l.icon}</span> {l.label}
    </span>
  );
}
