import type { LocalTransaction } from '../operation/define-operation.js';
import { sql } from '../sql/sql.js';
import type { StoreTransaction } from './store.js';

/** Where a proposal's Slack message is: the channel it was posted to and its `ts` (Slack's message id). */
export interface SlackMessageRecord {
  readonly tenant: string;
  readonly proposalId: string;
  readonly channel: string;
  readonly ts: string;
  readonly postedAt: number;
}

/** A Slack user an admin linked to an operator of the tenant (by the operator's email). */
export interface SlackUserLink {
  readonly tenant: string;
  /** Slack's user id, `U…` or `W…`. */
  readonly slackUser: string;
  readonly operatorEmail: string;
  /** The admin who linked them (`user:<email>`). */
  readonly linkedBy: string;
  readonly linkedAt: number;
}

/**
 * The Slack statements, run through a store transaction's `local` SQL (the `sql` tag), so SQLite
 * and PostgreSQL run the same statements. Every statement names its tenant.
 */
export interface SlackRecords {
  /** The message a proposal was posted as, if any. */
  message(tenant: string, proposalId: string): Promise<SlackMessageRecord | undefined>;
  /** Records the message a proposal was posted as; the first one recorded stays (returns whether this one did). */
  recordMessage(record: SlackMessageRecord): Promise<boolean>;
  /**
   * The id of a proposal's oldest Slack delivery still in the outbox: its payload holds the facts
   * the card shows (every event of a proposal carries the same ones).
   */
  cardDelivery(tenant: string, proposalId: string): Promise<string | undefined>;
  /** The link of a Slack user in a tenant, if an admin made one. */
  link(tenant: string, slackUser: string): Promise<SlackUserLink | undefined>;
  /** A tenant's links, by Slack user id. */
  links(tenant: string): Promise<SlackUserLink[]>;
  /** Links a Slack user (replacing an earlier link); answers the operator it was linked to before, if any. */
  setLink(record: SlackUserLink): Promise<string | null>;
  /** Removes a link; answers the operator it named, or null when there was none. */
  removeLink(tenant: string, slackUser: string): Promise<string | null>;
}

const text = (value: unknown): string => String(value);

function linkOf(row: Record<string, unknown>): SlackUserLink {
  return {
    tenant: text(row['tenant']),
    slackUser: text(row['slack_user']),
    operatorEmail: text(row['operator_email']),
    linkedBy: text(row['linked_by']),
    // PostgreSQL returns BIGINT as text.
    linkedAt: Number(row['linked_at']),
  };
}

/** The Slack records of one store transaction. */
export function slackRecordsOf(tx: Pick<StoreTransaction, 'local'>): SlackRecords {
  const local: LocalTransaction = tx.local;
  const link = async (tenant: string, slackUser: string) => {
    const rows = await local.all(
      sql`SELECT * FROM countersign_slack_users WHERE tenant = ${tenant} AND slack_user = ${slackUser}`,
    );
    return rows[0] ? linkOf(rows[0]) : undefined;
  };
  return {
    message: async (tenant, proposalId) => {
      const rows = await local.all(
        sql`SELECT * FROM countersign_slack_messages WHERE tenant = ${tenant} AND proposal_id = ${proposalId}`,
      );
      const row = rows[0];
      return row
        ? {
            tenant: text(row['tenant']),
            proposalId: text(row['proposal_id']),
            channel: text(row['channel']),
            ts: text(row['ts']),
            postedAt: Number(row['posted_at']),
          }
        : undefined;
    },
    recordMessage: async (r) => {
      const { changes } = await local.run(
        sql`INSERT INTO countersign_slack_messages (tenant, proposal_id, channel, ts, posted_at) VALUES (${r.tenant}, ${r.proposalId}, ${r.channel}, ${r.ts}, ${r.postedAt}) ON CONFLICT (tenant, proposal_id) DO NOTHING`,
      );
      return changes === 1;
    },
    cardDelivery: async (tenant, proposalId) => {
      const rows = await local.all(
        sql`SELECT id FROM countersign_outbox WHERE tenant = ${tenant} AND proposal_id = ${proposalId} AND channel = 'slack' ORDER BY created_at, id LIMIT 1`,
      );
      return rows[0] ? text(rows[0]['id']) : undefined;
    },
    link,
    links: async (tenant) =>
      (
        await local.all(
          sql`SELECT * FROM countersign_slack_users WHERE tenant = ${tenant} ORDER BY slack_user`,
        )
      ).map(linkOf),
    setLink: async (r) => {
      const before = await link(r.tenant, r.slackUser);
      await local.run(
        sql`INSERT INTO countersign_slack_users (tenant, slack_user, operator_email, linked_by, linked_at) VALUES (${r.tenant}, ${r.slackUser}, ${r.operatorEmail}, ${r.linkedBy}, ${r.linkedAt}) ON CONFLICT (tenant, slack_user) DO UPDATE SET operator_email = ${r.operatorEmail}, linked_by = ${r.linkedBy}, linked_at = ${r.linkedAt}`,
      );
      return before?.operatorEmail ?? null;
    },
    removeLink: async (tenant, slackUser) => {
      const before = await link(tenant, slackUser);
      if (!before) return null;
      await local.run(
        sql`DELETE FROM countersign_slack_users WHERE tenant = ${tenant} AND slack_user = ${slackUser}`,
      );
      return before.operatorEmail;
    },
  };
}
