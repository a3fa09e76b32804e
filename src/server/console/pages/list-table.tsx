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
