// The form state `formTools` gives its submit tool (what the core compares
// at approval: "Form changed since confirmation was requested"), kept by
// definition object in this module's own WeakMap. JS because formTools and
// the registry are modules of their own (Cargo.toml's `forms`, `toolmark`)
// and this one file is shared by both; nothing a tool definition carries,
// from any script or any copy of the package, can put a state here.
const states = new WeakMap();

/** Called by formTools for its submit tool's definition. */
export function setFormState(definition, state) {
  states.set(definition, state);
}

/** The state function formTools gave `definition`, or undefined. */
export function formState(definition) {
  return states.get(definition);
}
