import { describe, expectTypeOf, it } from 'vitest';
import { de } from '../../src/i18n/catalogs/de.js';
import type { en } from '../../src/i18n/catalogs/en.js';
import { translation } from '../../src/i18n/translation.js';
import { type MessageKey, translate } from '../../src/i18n/index.js';

const { 'handback.pending': _pending, ...withoutPending } = de;

describe('catalog types', () => {
  it('key every translation by the English catalog', () => {
    expectTypeOf<keyof typeof de>().toEqualTypeOf<MessageKey>();
    expectTypeOf<keyof typeof en>().toEqualTypeOf<MessageKey>();
  });

  it('refuse a translation missing a key', () => {
    // @ts-expect-error 'handback.pending' is missing
    translation(withoutPending);
  });

  it('refuse a translation with a key English does not have', () => {
    // @ts-expect-error 'handback.unknown' is not a message
    translation({ ...de, 'handback.unknown': 'x' });
  });

  it('refuse a translation whose placeholders differ from English', () => {
    // @ts-expect-error {next} renamed
    translation({ ...de, 'handback.superseded': 'Ersetzt durch {neu}.' });
    // @ts-expect-error {note} dropped
    translation({ ...de, 'handback.declined_note': 'Abgelehnt.' });
  });

  it('ask translate for exactly the placeholders of the message', () => {
    translate('de', 'handback.pending');
    translate('de', 'handback.superseded', { next: 'prp_1' });
    // @ts-expect-error {next} is required
    translate('de', 'handback.superseded');
    // @ts-expect-error `nxt` is not a placeholder of this message
    translate('de', 'handback.superseded', { nxt: 'prp_1' });
    // @ts-expect-error no such key
    translate('de', 'handback.nope');
  });
});
