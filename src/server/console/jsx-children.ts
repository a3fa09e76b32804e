import type { Child } from 'hono/jsx';

// hono types every element's attributes with an `any` index signature, so an element would take
// any child. Typing `children` makes a child that is not renderable markup a compile error; above
// all a ModelText, which must go through UserText (render-text.tsx) to be marked.
declare module 'hono/jsx' {
  namespace JSX {
    interface HTMLAttributes {
      children?: Child;
    }
  }
}
