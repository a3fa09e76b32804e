// An operator is named by their email: two emails that look the same on a page (an existing
// operator's with a U+200B inside, or a Cyrillic "а" for the Latin "a", or fullwidth letters) are
// two people to the directory and one to the person reading an audit line or a "1 of 2 approvals"
// list. So the directory refuses a new email that holds an invisible code point, or whose UTS #39
// skeleton equals an existing operator's. The skeleton's mapping is the Unicode confusables data
// (confusables.txt) as the `unhomoglyph` package ships it; nothing here lists characters by hand.

import unhomoglyph from 'unhomoglyph';
import type { LocalTransaction } from '../../operation/define-operation.js';
import { hasHidden } from '../../operation/text-hazards.js';
import { sql } from '../../sql/sql.js';

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The UTS #39 skeleton of an email: NFKC and lower case first (emails compare without case, and
 * confusables.txt leaves most compatibility variants, such as fullwidth `ｄ` or a circled `ⓐ`, to
 * the NFKC of identifier profiles), then NFD, default-ignorable code points removed, each code
 * point replaced by its confusables prototype, NFD again. Two emails with the same skeleton look
 * alike; it is a key to compare, not text to show (`m` becomes `rn`).
 *
 * @example
 * emailSkeleton('\u0430da@acme.test') === emailSkeleton('ada@acme.test') // true (Cyrillic а)
 */
export function emailSkeleton(email: string): string {
  const folded = email.normalize('NFKC').toLowerCase();
  return unhomoglyph(folded.normalize('NFD').replace(IGNORABLE, '')).normalize('NFD');
}

/**
 * Why an email cannot name a new operator, or undefined when it can. `email_invisible`: it holds
 * an invisible, format, private-use or unassigned code point (the console's own rule, so what it
 * would mark is refused here). `email_confusable`: its skeleton is another operator's.
 */
export type EmailRefusal = 'email_invisible' | 'email_confusable';

/** Whether `email` (as given, before trimming) holds a code point the console marks as hidden. */
export function hasInvisibleCharacters(email: string): boolean {
  return hasHidden(email);
}

/**
 * The existing operator whose email looks like `email` (same skeleton, different email), or
 * undefined. Operators are keyed by email across tenants, so every tenant's are compared. Rows
 * from before the skeleton column (migration 19) have none stored: theirs is computed here.
 */
export async function lookalikeOperator(db: LocalTransaction, email: string): Promise<string | undefined> {
  const skeleton = emailSkeleton(email);
  const rows = await db.all(
    sql`SELECT email, email_skeleton FROM countersign_operators WHERE (email_skeleton = ${skeleton} OR email_skeleton IS NULL) AND email <> ${email}`,
  );
  const match = rows.find((r) => (r['email_skeleton'] ?? emailSkeleton(String(r['email']))) === skeleton);
  return match === undefined ? undefined : String(match['email']);
}
