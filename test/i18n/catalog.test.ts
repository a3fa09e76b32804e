import { describe, expect, it } from 'vitest';
import { CATALOGS, LANGUAGES, translate } from '../../src/i18n/index.js';
import { placeholdersOf } from '../../src/i18n/catalog.js';
import { PROPOSAL_STATUSES } from '../../src/store/index.js';

const english = CATALOGS.en;
const keys = Object.keys(english).sort();

describe('message catalogs', () => {
  it('ship English, German and French', () => {
    expect([...LANGUAGES].sort()).toEqual(['de', 'en', 'fr']);
    expect(Object.keys(CATALOGS).sort()).toEqual(['de', 'en', 'fr']);
  });

  for (const language of LANGUAGES) {
    describe(language, () => {
      const catalog = CATALOGS[language];
      it('has exactly the keys of the English catalog', () => {
        expect(Object.keys(catalog).sort()).toEqual(keys);
      });

      it('uses in every message exactly the placeholders of the English one', () => {
        const differing = keys.filter(
          (key) =>
            JSON.stringify(placeholdersOf(catalog[key as keyof typeof catalog])) !==
            JSON.stringify(placeholdersOf(english[key as keyof typeof english])),
        );
        expect(differing).toEqual([]);
      });

      it('has no empty message and no stray brace outside a placeholder', () => {
        for (const key of keys) {
          const message = catalog[key as keyof typeof catalog];
          expect(message.trim(), key).not.toBe('');
          expect(message.replace(/\{[A-Za-z][A-Za-z0-9_]*\}/g, ''), key).not.toMatch(/[{}]/);
        }
      });

      it('labels every proposal status', () => {
        for (const status of PROPOSAL_STATUSES) expect(Object.hasOwn(catalog, `status.${status}`)).toBe(true);
      });
    });
  }

  it('translates German and French: not a copy of the English text', () => {
    const same = (language: 'de' | 'fr') =>
      keys.filter(
        (k) =>
          k !== 'handback.line' &&
          CATALOGS[language][k as keyof typeof english] === english[k as keyof typeof english],
      );
    expect(same('de')).toEqual([]);
    expect(same('fr')).toEqual([]);
  });
});

describe('translate', () => {
  it('fills placeholders in the language asked for', () => {
    expect(translate('en', 'handback.superseded', { next: 'prp_2' })).toBe(
      'An operator edited it; the new proposal is prp_2.',
    );
    expect(translate('de', 'handback.superseded', { next: 'prp_2' })).toBe(
      'Ein Operator hat ihn bearbeitet; der neue Vorschlag ist prp_2.',
    );
    expect(translate('fr', 'handback.superseded', { next: 'prp_2' })).toBe(
      'Un opérateur l’a modifiée\u202f; la nouvelle proposition est prp_2.',
    );
  });

  it('inserts a value that looks like a placeholder as text, in one pass', () => {
    expect(translate('en', 'handback.declined_note', { note: '{note} and {__proto__}' })).toBe(
      'A human declined it: {note} and {__proto__}',
    );
  });
});
