import { z } from 'zod';
import { defineOperation } from '../../../src/index.js';

/** Strings a model could produce to break out of the page: markup, attribute breakers, bidi overrides. */
export const HOSTILE = {
  script: '<script>window.__pwned = 1; alert(1)</script>',
  attribute: '"><img src=x onerror="window.__pwned = 2; alert(2)">',
  // "Pay invoice" with a right-to-left override that would make "txt.exe" read as "exe.txt".
  bidi: 'refund\u202Etxt.exe\u202C to \u2066isolated\u2069 \u200Bzero-width',
} as const;

/**
 * `test.hostile`: an operation whose preview repeats whatever the model sent, in the title, in a
 * field, in a list and in a field name, so the console's escaping is tested end to end.
 */
export const hostileOperation = defineOperation({
  kind: 'test.hostile',
  scopeVersion: 1,
  effect: 'local',
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('test.hostile'), text: z.string() }),
  request: z.strictObject({ text: z.string().max(2000) }),
  arguments: z.strictObject({ text: z.string() }),
  editable: ['text'],
  async prepare(request) {
    return {
      arguments: { text: request.text },
      preview: {
        title: request.text,
        note: request.text,
        recipients: [HOSTILE.script, HOSTILE.attribute, HOSTILE.bidi],
        [HOSTILE.attribute]: 'a field named by the model',
      },
    };
  },
  async execute(args) {
    return { echoed: args.text };
  },
});
