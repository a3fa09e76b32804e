/** What every scripted model in examples/ sees (the same shape in each framework). */
export interface View {
  readonly input: string;
  readonly system: string;
  readonly toolResults: readonly string[];
  readonly tools: readonly string[];
}

type Step =
  | { readonly toolCall: { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> } }
  | { readonly text: string };

/** One user turn of a plan: the tool calls the model makes in order (one per model call), then its answer. */
export interface TurnPlan {
  readonly calls: readonly { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> }[];
  readonly answer?: string;
}

/**
 * A deterministic model script: for the user message `input`, the model makes the planned calls one
 * per step (after the n-th tool result it makes call n), then answers. Every view is recorded.
 */
export function plannedScript(turns: Readonly<Record<string, TurnPlan>>): {
  script: (view: View) => Step;
  views: View[];
} {
  const views: View[] = [];
  const script = (view: View): Step => {
    views.push(view);
    const plan = turns[view.input];
    if (!plan) return { text: `no plan for "${view.input}"` };
    const next = plan.calls[view.toolResults.length];
    if (next) return { toolCall: next };
    return { text: plan.answer ?? 'Done.' };
  };
  return { script, views };
}
