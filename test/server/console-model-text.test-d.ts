import type { Child, JSX } from 'hono/jsx';
import { describe, expectTypeOf, it } from 'vitest';
import { type ModelText, modelText } from '../../src/server/console/model-text.js';
import { UserText, userText, withoutInvisible } from '../../src/server/console/render-text.js';

const title = modelText('Pay Northwind\u202E');

describe('model text in the console views', () => {
  it('is not a JSX child: <p>{title}</p> does not compile', () => {
    expectTypeOf<ModelText>().not.toMatchTypeOf<Child>();
    // What the compiler checks for `<p>{title}</p>` and `<span>x {title}</span>`.
    // @ts-expect-error a ModelText is not renderable markup
    const p: JSX.IntrinsicElements['p'] = { children: title };
    // @ts-expect-error not inside a list of children either
    const span: JSX.IntrinsicElements['span'] = { children: ['x ', title] };
    expectTypeOf(p).not.toBeAny();
    expectTypeOf(span).not.toBeAny();
  });

  it('is not a string: it cannot be concatenated into an attribute or text unnoticed', () => {
    expectTypeOf<ModelText>().not.toMatchTypeOf<string>();
    // @ts-expect-error a ModelText is not a string
    const text: string = title;
    expectTypeOf(text).toBeString();
  });

  it('cannot be forged from a look-alike object', () => {
    // @ts-expect-error ModelText has a private field: only modelText makes one
    const forged: ModelText = {};
    expectTypeOf(forged).toEqualTypeOf<ModelText>();
  });

  it('renders only through the marking path', () => {
    expectTypeOf(UserText).parameter(0).toMatchTypeOf<{ readonly text: ModelText | string }>();
    expectTypeOf(userText).toBeCallableWith(title);
    expectTypeOf(withoutInvisible(title)).toBeString();
  });
});
