import type { Child } from 'hono/jsx';

/** A banner above a page: the result of the last action, or why the page cannot be acted on. */
export interface Notice {
  readonly tone: 'ok' | 'warn' | 'bad' | 'info';
  readonly title: string;
  readonly body?: Child;
  readonly reason?: string;
}

/** A {@link Notice}: its title, body and, for a refusal, its reason code; an alert when it warns. */
export function NoticeBanner({ notice: n }: { readonly notice: Notice }) {
  return (
    <div class={`banner ${n.tone}`} role={n.tone === 'bad' || n.tone === 'warn' ? 'alert' : 'status'}>
      <strong>{n.title}</strong>
      {n.body ?? ''}
      {n.reason ? (
        <>
          {' '}
          <span class="muted">
            Reason <code class="reason-code">{n.reason}</code>
          </span>
        </>
      ) : (
        ''
      )}
    </div>
  );
}
