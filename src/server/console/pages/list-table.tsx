import type { Child } from 'hono/jsx';

/**
 * A list table in a focusable region named by its (visually hidden) caption, so that at 390 px it
 * scrolls on its own instead of widening the page.
 */
export function ListTable(props: { readonly id: string; readonly caption: Child; readonly children: Child }) {
  return (
    <section class="table-scroll" aria-labelledby={`${props.id}-caption`} tabindex={0}>
      <table class="list">
        <caption id={`${props.id}-caption`} class="sr-only">
          {props.caption}
        </caption>
        {props.children}
      </table>
    </section>
  );
}

/**
 * A list table's header row: a column header per label and, with `actions`, a last column for each
 * row's buttons, named for screen readers only.
 */
export function ListHead(props: { readonly columns: readonly Child[]; readonly actions?: boolean }) {
  return (
    <thead>
      <tr>
        {props.columns.map((column) => (
          <th scope="col">{column}</th>
        ))}
        {props.actions ? (
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        ) : (
          ''
        )}
      </tr>
    </thead>
  );
}
