import type { ConsoleSession } from '../../directory/principal-directory.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { UserText } from '../render-text.js';

/** Props of {@link ErrorPage}. */
export interface ErrorPageProps {
  readonly nonce: string;
  readonly session?: ConsoleSession | undefined;
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly correlationId?: string;
}

/** A refused or failed console request: the reason code, a safe message, and the correlation id for a 500. */
export function ErrorPage(input: ErrorPageProps) {
  const title =
    input.status === 404 ? 'Not found' : input.status >= 500 ? 'Something went wrong' : 'Request refused';
  return (
    <Layout title={title} nonce={input.nonce} session={input.session}>
      <main id="main">
        <div class="page-head">
          <div>
            <h1>{title}</h1>
          </div>
        </div>
        <div class={`banner ${input.status >= 500 ? 'bad' : 'warn'}`} role="alert">
          <strong>
            <UserText text={input.message} />
          </strong>{' '}
          Reason <code class="reason-code">{input.reason}</code>
          {input.correlationId ? (
            <>
              {' '}
              · correlation id <code>{input.correlationId}</code>
            </>
          ) : (
            ''
          )}
        </div>
        <p>
          <a href="/">Back to the inbox</a>
        </p>
      </main>
    </Layout>
  );
}

/** The error page as a document. */
export function errorPage(input: ErrorPageProps): Page {
  return renderPage(<ErrorPage {...input} />);
}
