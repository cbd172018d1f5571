// formTools(form, { scope, sensitive? }): fill / read / submit tools for a real
// HTML form. The core decides (confirmation, redaction of declared paths, the
// stale-form rule); this file only reads and writes the DOM.
// JS for now: it reads and writes the DOM; it moves to Rust (web-sys) in its own issue.
import { STATE } from './toolmark.js';

const REDACTED = '[redacted]';

function fieldsOf(form) {
  const byName = new Map();
  for (const element of Array.from(form.elements)) {
    const name = element.name;
    if (!name || element.disabled) continue;
    const type = (element.type || '').toLowerCase();
    if (['submit', 'button', 'reset', 'image', 'file'].includes(type)) continue;
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name).push(element);
  }
  return byName;
}

function kindOf(elements) {
  const first = elements[0];
  const type = (first.type || '').toLowerCase();
  if (type === 'checkbox' && elements.length === 1) return 'checkbox';
  if (type === 'radio') return 'radio';
  if (first.tagName === 'SELECT') return first.multiple ? 'select-multiple' : 'select';
  if (type === 'number' || type === 'range') return 'number';
  return 'text';
}

function isSensitiveElement(element) {
  const type = (element.type || '').toLowerCase();
  const autocomplete = (element.getAttribute && element.getAttribute('autocomplete')) || '';
  return type === 'password' || /(^|\s)cc-/.test(autocomplete.toLowerCase());
}

function readValue(elements, kind, useDefault) {
  const first = elements[0];
  switch (kind) {
    case 'checkbox':
      return useDefault ? first.defaultChecked : first.checked;
    case 'radio': {
      const checked = elements.find((e) => (useDefault ? e.defaultChecked : e.checked));
      return checked ? checked.value : undefined;
    }
    case 'select-multiple':
      return Array.from(first.options)
        .filter((o) => (useDefault ? o.defaultSelected : o.selected))
        .map((o) => o.value);
    case 'select': {
      if (!useDefault) return first.value === '' ? undefined : first.value;
      const option = Array.from(first.options).find((o) => o.defaultSelected);
      return option ? option.value : undefined;
    }
    case 'number': {
      const raw = useDefault ? first.defaultValue : first.value;
      return raw === '' ? undefined : Number(raw);
    }
    default: {
      const raw = useDefault ? first.defaultValue : first.value;
      return raw === '' ? undefined : raw;
    }
  }
}

function writeValue(elements, kind, value) {
  const first = elements[0];
  const fire = (element) => {
    element.dispatchEvent(new Event('input', { bubbles: true }));
    element.dispatchEvent(new Event('change', { bubbles: true }));
  };
  switch (kind) {
    case 'checkbox':
      first.checked = Boolean(value);
      fire(first);
      break;
    case 'radio':
      for (const element of elements) element.checked = element.value === String(value);
      for (const element of elements) fire(element);
      break;
    case 'select-multiple': {
      const wanted = new Set((Array.isArray(value) ? value : [value]).map(String));
      for (const option of Array.from(first.options)) option.selected = wanted.has(option.value);
      fire(first);
      break;
    }
    default:
      first.value = value === undefined || value === null ? '' : String(value);
      fire(first);
  }
}

function schemaOf(elements, kind) {
  switch (kind) {
    case 'checkbox':
      return { type: 'boolean' };
    case 'number':
      return { type: 'number' };
    case 'radio':
      return { enum: elements.map((e) => e.value) };
    case 'select':
      return { enum: Array.from(elements[0].options).map((o) => o.value) };
    case 'select-multiple':
      return { type: 'array', items: { enum: Array.from(elements[0].options).map((o) => o.value) } };
    default:
      return { type: 'string' };
  }
}

/** 64 bits of FNV-1a, so the stale check keeps no field values (passwords) around. */
function fingerprint(text) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 ^ 0x2f) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/**
 * @param {HTMLFormElement} form
 * @param {{ scope: { register: Function, name?: string }, sensitive?: string[], title?: string }} options
 * @returns {() => void} unregisters the three tools
 */
export function formTools(form, options = {}) {
  const { scope, sensitive = [] } = options;
  if (!form || typeof form.elements !== 'object' || typeof form.requestSubmit !== 'function') {
    throw new TypeError('formTools: form must be an HTMLFormElement');
  }
  if (!scope || typeof scope.register !== 'function') {
    throw new TypeError("formTools: options.scope must be a scope (tm.scope('name'))");
  }
  const label = options.title || form.getAttribute('aria-label') || form.name || form.id || (scope.name ?? 'the');
  const snapshotFields = () => {
    const values = {};
    for (const [name, elements] of fieldsOf(form)) values[name] = readValue(elements, kindOf(elements), false);
    return values;
  };
  const sensitiveNames = () => {
    const names = new Set(sensitive);
    for (const [name, elements] of fieldsOf(form)) if (elements.some(isSensitiveElement)) names.add(name);
    return [...names];
  };
  const inputSchema = () => {
    const properties = {};
    for (const [name, elements] of fieldsOf(form)) properties[name] = schemaOf(elements, kindOf(elements));
    return { type: 'object', properties, additionalProperties: false };
  };

  const offFill = scope.register({
    name: 'fill',
    title: `Fill ${label} form`,
    description: `Fill fields of the ${label} form. Input: an object of field name to value; fields left out keep their value.`,
    inputSchema: inputSchema(),
    snapshot() {
      const before = snapshotFields();
      return () => {
        for (const [name, elements] of fieldsOf(form)) writeValue(elements, kindOf(elements), before[name]);
      };
    },
    run(input) {
      const fields = fieldsOf(form);
      const filled = [];
      for (const [name, value] of Object.entries(input)) {
        const elements = fields.get(name);
        if (!elements) continue;
        writeValue(elements, kindOf(elements), value);
        filled.push(name);
      }
      return { filled };
    },
  });

  const offRead = scope.register({
    name: 'read',
    title: `Read ${label} form`,
    description: `Read the current values of the ${label} form (sensitive fields are redacted).`,
    hints: { readOnly: true, untrustedContent: true },
    inputSchema: { type: 'object', additionalProperties: false },
    run() {
      const values = snapshotFields();
      for (const name of sensitiveNames()) if (values[name] !== undefined) values[name] = REDACTED;
      return values;
    },
  });

  const submit = {
    name: 'submit',
    title: `Submit ${label} form`,
    description: `Submit the ${label} form as it is filled now. A human confirms first.`,
    hints: { consequential: true },
    inputSchema: { type: 'object', additionalProperties: false },
    get sensitive() {
      return sensitiveNames();
    },
    summary: () => `Submit the ${label} form`,
    changes() {
      const changes = [];
      for (const [name, elements] of fieldsOf(form)) {
        const kind = kindOf(elements);
        const before = readValue(elements, kind, true);
        const after = readValue(elements, kind, false);
        if (JSON.stringify(before) === JSON.stringify(after)) continue;
        const change = { path: name };
        if (before !== undefined) change.before = before;
        if (after !== undefined) change.after = after;
        changes.push(change);
      }
      return changes;
    },
    [STATE]: () => fingerprint(JSON.stringify(snapshotFields())),
    run() {
      form.requestSubmit();
      return { submitted: true };
    },
  };
  const offSubmit = scope.register({ ...submit, sensitive: sensitiveNames() });

  return function dispose() {
    offFill();
    offRead();
    offSubmit();
  };
}
