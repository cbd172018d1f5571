// A minimal stand-in for an HTMLFormElement (Node has no DOM): what
// formTools(form, { scope }) reads and writes.

/** A text-like <input>. */
export function field(name, { type = 'text', value = '', autocomplete } = {}) {
  return {
    tagName: 'INPUT',
    name,
    type,
    value,
    defaultValue: value,
    disabled: false,
    getAttribute: (attribute) => (attribute === 'autocomplete' ? (autocomplete ?? null) : null),
    dispatchEvent: () => true,
  };
}

/** A form with these elements; `submits` counts requestSubmit() calls. */
export function fakeForm(name, elements) {
  const form = {
    name,
    id: name,
    elements,
    submits: 0,
    getAttribute: () => null,
    requestSubmit() {
      form.submits += 1;
    },
  };
  return form;
}
