/**
 * Text that came from the agent or its model: a proposal's title, run id, resource, section,
 * request and preview strings, the handback, a tool's output. It is an object, not a string, so
 * it is not a valid JSX child: the only way onto a page is `<UserText text={…} />` (or
 * `userText`) in render-text.tsx, which marks invisible, direction-changing and look-alike
 * characters. Made by `modelText` at the engine→view boundary (model-view.ts).
 */
export class ModelText {
  readonly #text: string;

  private constructor(text: string) {
    this.#text = text;
  }

  /** Wraps a string the model produced. Call it where engine data enters a view, nowhere else. */
  static of(text: string): ModelText {
    return new ModelText(text);
  }

  /** The raw text, for the marking path in render-text.tsx and for form fields (after `withoutInvisible`). */
  static read(text: ModelText | string): string {
    return typeof text === 'string' ? text : text.#text;
  }
}

/** Wraps a string the model produced as {@link ModelText}. */
export function modelText(text: string): ModelText {
  return ModelText.of(text);
}
