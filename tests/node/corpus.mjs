// A deterministic corpus of protocol v1 message texts for the differential
// test (tests/node/differential.test.mjs): valid messages of every type in
// both directions, and mutations of each of them.
//
// generateCorpus(seed) → [{ text, note }], where `text` is JSON text that
// JSON.parse accepts, nested no deeper than 100, without unpaired surrogates.
// `expect` is set on hand-built valid messages only: the direction they are
// valid in ('toPage' | 'toAgent'); they must be invalid in the other one.
// Nothing here uses Math.random: the same seed gives the same corpus.

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deepest nesting of arrays/objects in a parsed value (a scalar is 0, `{}` is 1). */
export function nestingDepth(value) {
  let max = 0;
  const stack = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) max = depth;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when any string or key of a parsed value holds an unpaired surrogate. */
export function hasLoneSurrogate(value) {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (LONE_SURROGATE.test(node)) return true;
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Raw JSON fragments: a value that serializes to literal text (e.g. `7.0`,
// `-0`, `18446744073709551616`), spliced in after JSON.stringify.

class Raw {
  constructor(text) {
    this.text = text;
  }
}
const RAW_MARKER = /"@@raw:(\d+)@@"/g;
const raw = (text) => new Raw(text);

/** A deep clone that keeps Raw leaves (and optionally shuffles keys). */
function clone(value, shuffle) {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => clone(item, shuffle));
  const keys = Object.keys(value);
  if (shuffle) shuffle(keys);
  const out = {};
  for (const key of keys) defineKey(out, key, clone(value[key], shuffle));
  return out;
}

/** obj[key] = value, also for `__proto__` (an own data property, as JSON.parse makes). */
function defineKey(obj, key, value) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------------------
// Building blocks.

const STATUSES = ['ok', 'invalid', 'refused', 'needs_confirmation', 'cancelled', 'error'];
const CODES = ['unknown_tool', 'stale', 'not_allowed', 'busy', 'undo_unavailable', 'confirmation_expired'];
const REV_CODES = new Set(['unknown_tool', 'stale']);
const BY = ['operator', 'signal', 'policy'];
const TO_AGENT_TYPES = ['manifest', 'changed', 'result', 'confirmed'];
const TO_PAGE_TYPES = ['call', 'describe', 'cancel'];
const ALL_TYPES = [...TO_AGENT_TYPES, ...TO_PAGE_TYPES];
const HINT_KEYS = ['readOnly', 'consequential', 'destructive', 'untrustedContent'];

/** Non-ASCII and otherwise unusual (but valid, paired) strings. */
const UNICODE_STRINGS = [
  'é',
  'café-Ünïcödé',
  '日本語のテキスト',
  '😀',
  'emoji 😀👍🏽👨‍👩‍👧',
  'مرحبا بالعالم',
  'שלום עולם',
  '\u202Eevil\u202C',
  'e\u0301 a\u0308 n\u0303',
  'Z\u0351\u0364\u0300a\u0336l\u0315g\u0327o',
  'nul\u0000byte',
  '\u0000',
  'tab\tnew\nline\r',
  'quote " backslash \\ slash /',
  '\u2028\u2029',
  '\uFEFFbom',
  '\uD834\uDD1E clef',
  '\u00A0nbsp',
  ' ',
  'x'.repeat(5000),
];

const ID_SAMPLES = ['x', '0', 'call-1', ' ', '00000000-0000-4000-8000-000000000000', ...UNICODE_STRINGS.slice(0, 16)];

/** Tool names that break `^[A-Za-z0-9_.-]{1,128}$`. */
const BAD_NAMES = [
  '',
  'sign up',
  ' signup',
  'signup ',
  'signup\n',
  '\nsignup',
  'signup.fill\u0000',
  'café',
  '日本',
  'emoji😀',
  'a/b',
  'a:b',
  'a+b',
  'a'.repeat(129),
  `${'abc.'.repeat(32)}d`,
  'a\tb',
  'ａｂｃ',
];
/** Tool names that match it. */
const GOOD_NAMES = ['a', 'A', '0', '.', '-', '_', '..', 'signup.fill', 'a.b-c_d.E9', 'a'.repeat(128), `${'ab.'.repeat(42)}cd`];
/** llmNames that break `^[a-zA-Z0-9_-]{1,64}$`. */
const BAD_LLM_NAMES = ['', 'signup.fill', 'a b', 'é', '😀', 'a'.repeat(65), 'x\n', '\nx', 'a/b', 'a.b'];
const GOOD_LLM_NAMES = ['a', '-', '_', 'signup__fill', 'a'.repeat(64), 'Z9_-z'];

/** Literal number texts for `rev` and their verdict-relevant shape. */
const REV_RAW = [
  '-1',
  '1.5',
  '7.0',
  '7.00000',
  '7e0',
  '0.7e1',
  '700e-2',
  '1E2',
  '1e300',
  '-1e300',
  '-0',
  '-0.0',
  '0.0',
  '18446744073709551615',
  '18446744073709551616',
  '18446744073709551617',
  '9007199254740993',
  '99999999999999999999999999999999',
  '1e21',
  '1e400',
  '-1e400',
  '1e-7',
  '5e-324',
  '0.1',
  '-7',
  '4294967296',
  '2147483648.5',
];

/** Literal texts for `protocol`. */
const PROTOCOL_RAW = ['2', '0', '-1', '1.0', '1e0', '10e-1', '0.1e1', '1.5', '1.0000000000000002', '"1"', 'true', 'null', '[1]', '{}', '{"v":1}', '-1.0', '1e400'];

/** Replacement values that retype a property. */
const RETYPES = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['0', 0],
  ['1', 1],
  ['-1', -1],
  ['1.5', 1.5],
  ['""', ''],
  ['"x"', 'x'],
  ['"1"', '1'],
  ['[]', []],
  ['["x"]', ['x']],
  ['{}', {}],
  ['{"k":"v"}', { k: 'v' }],
];

/** JSON values of every kind (for `input`, `data`, `before`, `after`). */
function jsonKinds() {
  const protoKey = JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"toString":"x"}');
  return [
    ['null', null],
    ['true', true],
    ['false', false],
    ['0', 0],
    ['negative', -42],
    ['-0', raw('-0')],
    ['float', 3.14159],
    ['1e300', raw('1e300')],
    ['huge int', raw('18446744073709551616')],
    ['tiny', raw('5e-324')],
    ['empty string', ''],
    ['string', 'hello'],
    ['unicode string', '日本語 😀 e\u0301'],
    ['nul string', '\u0000\u0001\u001f'],
    ['empty array', []],
    ['array', [1, 'two', null, true, { three: [3] }]],
    ['empty object', {}],
    ['object', { email: 'a@b.c', age: 30, tags: ['x', 'y'], nested: { a: { b: { c: [null, false] } } } }],
    ['unicode keys', { 'é': 1, '日本': [2], '😀': { '': 3 } }],
    ['proto keys', protoKey],
    ['empty key', { '': '' }],
    ['long string', 'lorem ipsum '.repeat(2000)],
    ['wide array', Array.from({ length: 500 }, (_, i) => i)],
  ];
}

/** An input nested so that the whole message reaches `total` levels. */
function nested(levels) {
  let value = 'bottom';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { d: value };
  return value;
}

function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The spec's llmName: `.` → `__`, truncated to 55 chars + `_` + 8 hex of FNV-1a. */
export function llmNameOf(name) {
  const llm = name.replaceAll('.', '__');
  return llm.length <= 64 ? llm : `${llm.slice(0, 55)}_${fnv1a(name)}`;
}

// ---------------------------------------------------------------------------

export function generateCorpus(seed = 1) {
  const random = mulberry32(seed);
  const int = (n) => Math.floor(random() * n);
  const pick = (list) => list[int(list.length)];
  const chance = (p) => random() < p;
  const shuffle = (list) => {
    for (let i = list.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
    return list;
  };
  const hex = (n) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[int(4)]}${hex(3)}-${hex(12)}`;
  const id = () => (chance(0.85) ? uuid() : pick(ID_SAMPLES));
  const text = () => (chance(0.8) ? pick(['Invalid email', 'Tool failed', 'Fill the signup form', 'Delete 3 rows?', '', 'ok']) : pick(UNICODE_STRINGS));
  const revValue = () => pick([0, 1, 7, 42, 1000, 2 ** 31, 2 ** 53 - 1]);

  const entries = [];
  const seen = new Set();

  /** Serializes a value (with Raw leaves) in a randomly chosen layout. */
  function serialize(value) {
    const raws = [];
    const prepared = (function replace(node) {
      if (node instanceof Raw) {
        raws.push(node.text);
        return `@@raw:${raws.length - 1}@@`;
      }
      if (node === null || typeof node !== 'object') return node;
      if (Array.isArray(node)) return node.map(replace);
      const out = {};
      for (const key of Object.keys(node)) defineKey(out, key, replace(node[key]));
      return out;
    })(chance(0.3) ? clone(value, shuffle) : value);
    const layout = int(10);
    let json;
    if (layout === 0) json = JSON.stringify(prepared, null, 2);
    else if (layout === 1) json = JSON.stringify(prepared, null, '\t');
    else if (layout === 2) json = ` \r\n${JSON.stringify(prepared)}\n\t `;
    else json = JSON.stringify(prepared);
    if (json === undefined) throw new Error('corpus: value has no JSON text');
    return json.replace(RAW_MARKER, (_, index) => raws[Number(index)]);
  }

  function addText(json, note, expect) {
    const value = JSON.parse(json); // throws on a corpus bug
    if (nestingDepth(value) > 100) throw new Error(`corpus: too deep: ${note}`);
    if (hasLoneSurrogate(value)) throw new Error(`corpus: lone surrogate: ${note}`);
    if (seen.has(json)) return;
    seen.add(json);
    const entry = { text: json, note };
    if (expect) entry.expect = expect;
    entries.push(entry);
  }

  function add(value, note, expect) {
    addText(serialize(value), note, expect);
  }

  // -------------------------------------------------------------------------
  // Valid messages.

  const hintsOf = () => {
    const hints = {};
    for (const key of HINT_KEYS) if (chance(0.5)) hints[key] = chance(0.5);
    if (chance(0.15)) hints.futureHint = pick([true, 'x', 1, null, { a: [] }]);
    return hints;
  };
  const nameOf = () => {
    const parts = Array.from({ length: 1 + int(3) }, () => pick(['signup', 'fill', 'cart', 'item-list', 'a_b', 'X9', 'wizard', 'next']));
    return parts.join('.');
  };
  const entryOf = (name = nameOf()) => {
    const entry = { name, llmName: llmNameOf(name) };
    if (chance(0.6)) entry.title = text();
    entry.description = text();
    entry.hints = hintsOf();
    if (chance(0.2)) entry.mode = 'stepwise';
    if (chance(0.15)) entry.futureField = pick([[1], 'x', null, { nested: true }]);
    return entry;
  };

  const base = (type) => ({ protocol: 1, type, clientId: id() });
  const manifest = (tools, rev = revValue()) => ({ ...base('manifest'), rev, tools });
  const changed = (rev = revValue()) => ({ ...base('changed'), rev });
  const resultMsg = (result) => ({ ...base('result'), id: id(), result });
  const confirmedMsg = (result) => ({ ...base('confirmed'), confirmId: id(), result });
  const call = (input, rev) => {
    const message = { ...base('call'), id: id() };
    if (rev !== undefined) message.rev = rev;
    message.tool = chance(0.9) ? nameOf() : pick(UNICODE_STRINGS);
    message.input = input;
    return message;
  };
  const describe = () => ({ ...base('describe'), id: id(), tool: nameOf() });
  const cancel = () => ({ ...base('cancel'), id: id() });

  /** Valid tool results: [label, result]. */
  const results = [];
  results.push(['ok without data', { status: 'ok' }]);
  for (const [kind, value] of jsonKinds()) results.push([`ok data ${kind}`, { status: 'ok', data: value }]);
  results.push(['ok data deep', { status: 'ok', data: nested(90) }]);
  results.push(['invalid no issues', { status: 'invalid', issues: [] }]);
  results.push(['invalid one issue', { status: 'invalid', issues: [{ path: 'email', message: 'Invalid email' }] }]);
  results.push([
    'invalid many issues',
    {
      status: 'invalid',
      issues: [
        { path: '', message: '' },
        { path: 'a.b.0', message: 'Required' },
        { path: '日本', message: 'é 😀' },
      ],
    },
  ]);
  for (const code of CODES) {
    const refused = { status: 'refused', code, message: text() };
    if (REV_CODES.has(code)) refused.rev = revValue();
    results.push([`refused ${code}`, refused]);
  }
  results.push(['refused unknown_tool rev 0', { status: 'refused', code: 'unknown_tool', message: '', rev: 0 }]);
  results.push(['needs_confirmation no changes', { status: 'needs_confirmation', confirmId: uuid(), summary: 'Delete 3 rows?' }]);
  results.push(['needs_confirmation empty changes', { status: 'needs_confirmation', confirmId: uuid(), summary: '', changes: [] }]);
  results.push([
    'needs_confirmation changes',
    {
      status: 'needs_confirmation',
      confirmId: uuid(),
      summary: 'Fill the form',
      changes: [
        { path: 'email', before: '', after: 'a@b.c' },
        { path: 'name', after: 'Ann' },
        { path: 'old', before: 'x' },
        { path: 'password' },
        { path: 'card', before: '[redacted]', after: '[redacted]' },
        { path: 'n', before: null, after: 0 },
        { path: 'o', before: { a: [1] }, after: [true] },
      ],
    },
  ]);
  for (const [kind, value] of jsonKinds()) {
    results.push([`needs_confirmation before/after ${kind}`, { status: 'needs_confirmation', confirmId: 'c', summary: 's', changes: [{ path: 'p', before: value, after: value }] }]);
  }
  for (const by of BY) results.push([`cancelled ${by}`, { status: 'cancelled', by }]);
  results.push(['error', { status: 'error', message: 'Tool failed' }]);
  results.push(['error unsupported protocol', { status: 'error', message: 'unsupported protocol' }]);
  results.push(['error empty message', { status: 'error', message: '' }]);
  for (const sample of UNICODE_STRINGS) results.push([`error message ${JSON.stringify(sample).slice(0, 20)}`, { status: 'error', message: sample }]);

  /** Hand-built valid messages: [note, message, direction]. */
  const valid = [];
  const toAgent = (note, message) => valid.push([note, message, 'toAgent']);
  const toPage = (note, message) => valid.push([note, message, 'toPage']);

  toAgent('manifest empty tools', manifest([], 0));
  toAgent('manifest one tool minimal', manifest([{ name: 'a', llmName: 'a', description: '', hints: {} }]));
  toAgent('manifest several tools with titles', manifest([entryOf(), entryOf(), { ...entryOf(), title: 'Sign up' }, { ...entryOf(), title: '' }]));
  toAgent(
    'manifest all hints and stepwise',
    manifest([
      {
        name: 'signup.wizard',
        llmName: 'signup__wizard',
        title: 'Wizard',
        description: 'Step through signup',
        hints: { readOnly: false, consequential: true, destructive: false, untrustedContent: true },
        mode: 'stepwise',
      },
    ]),
  );
  toAgent(
    'manifest unknown properties in entry and hints',
    manifest([
      {
        name: 'x.y',
        llmName: 'x__y',
        description: 'd',
        hints: { readOnly: true, futureHint: 'soon', nested: { a: [1, 2] }, '': null, 'é': 1 },
        inputSchema: { type: 'object' },
        futureField: [1],
        '日本': '語',
        ...JSON.parse('{"__proto__":{"x":1}}'),
      },
    ]),
  );
  for (const name of GOOD_NAMES) toAgent(`manifest name ${name.length} chars ${name.slice(0, 12)}`, manifest([{ ...entryOf(name), llmName: pick(GOOD_LLM_NAMES) }]));
  for (const llmName of GOOD_LLM_NAMES) toAgent(`manifest llmName ${llmName.length} chars`, manifest([{ ...entryOf(), llmName }]));
  toAgent('manifest long name hashed llmName', manifest([entryOf(`${'segment.'.repeat(15)}end`)]));
  toAgent('manifest 50 tools', manifest(Array.from({ length: 50 }, () => entryOf())));
  for (const sample of UNICODE_STRINGS.slice(0, 16)) {
    toAgent(`manifest unicode title/description ${JSON.stringify(sample).slice(0, 16)}`, manifest([{ ...entryOf(), title: sample, description: sample }]));
  }
  toAgent('changed rev 0', changed(0));
  toAgent('changed rev 7', changed(7));
  toAgent('changed rev 2^53-1', changed(2 ** 53 - 1));
  for (const [label, result] of results) toAgent(`result ${label}`, resultMsg(result));
  for (const [label, result] of results.filter((_, i) => i % 3 === 0)) toAgent(`confirmed ${label}`, confirmedMsg(result));
  for (const status of STATUSES) {
    const [label, result] = results.find(([, r]) => r.status === status);
    toAgent(`confirmed status ${status} (${label})`, confirmedMsg(result));
  }
  for (const sample of ID_SAMPLES) {
    toAgent(`result ids ${JSON.stringify(sample).slice(0, 16)}`, { protocol: 1, type: 'result', clientId: sample, id: sample, result: { status: 'ok' } });
    toAgent(`confirmed ids ${JSON.stringify(sample).slice(0, 16)}`, { protocol: 1, type: 'confirmed', clientId: sample, confirmId: sample, result: { status: 'cancelled', by: 'operator' } });
    toPage(`cancel ids ${JSON.stringify(sample).slice(0, 16)}`, { protocol: 1, type: 'cancel', clientId: sample, id: sample });
    toPage(`describe tool ${JSON.stringify(sample).slice(0, 16)}`, { protocol: 1, type: 'describe', clientId: 'c', id: 'i', tool: sample });
  }
  toPage('call empty input', call({}));
  toPage('call with rev', call({ email: 'a@b.c' }, 7));
  toPage('call rev 0', call({}, 0));
  for (const [kind, value] of jsonKinds()) toPage(`call input ${kind}`, call(value, chance(0.5) ? revValue() : undefined));
  toPage('call input nested to depth 64', call(nested(63)));
  toPage('call input nested to depth 65', call(nested(64)));
  toPage('call input nested to depth 100', call(nested(99)));
  toPage('call nested objects', call({ a: { b: { c: { d: [{ e: { f: [[[]]] } }] } } } }, 3));
  toPage('describe', describe());
  toPage('cancel', cancel());

  // Randomly built valid messages, for variety.
  const randomResult = () => pick(results)[1];
  const randomValid = () => {
    switch (int(7)) {
      case 0:
        return ['manifest', manifest(Array.from({ length: int(5) }, () => entryOf())), 'toAgent'];
      case 1:
        return ['changed', changed(), 'toAgent'];
      case 2:
        return ['result', resultMsg(randomResult()), 'toAgent'];
      case 3:
        return ['confirmed', confirmedMsg(randomResult()), 'toAgent'];
      case 4:
        return ['call', call(pick(jsonKinds())[1], chance(0.5) ? revValue() : undefined), 'toPage'];
      case 5:
        return ['describe', describe(), 'toPage'];
      default:
        return ['cancel', cancel(), 'toPage'];
    }
  };
  for (let i = 0; i < 400; i++) {
    const [note, message, direction] = randomValid();
    valid.push([`random ${note} #${i}`, message, direction]);
  }

  for (const [note, message, direction] of valid) add(message, `valid: ${note}`, direction);

  // -------------------------------------------------------------------------
  // Mutations. `set`/`remove` work on a clone; paths are arrays of keys.

  const getAt = (value, path) => path.reduce((node, key) => node[key], value);
  const setAt = (value, path, replacement) => {
    const copy = clone(value);
    const parent = getAt(copy, path.slice(0, -1));
    const key = path[path.length - 1];
    if (Array.isArray(parent)) parent[key] = replacement;
    else defineKey(parent, key, replacement);
    return copy;
  };
  const removeAt = (value, path) => {
    const copy = clone(value);
    const parent = getAt(copy, path.slice(0, -1));
    const key = path[path.length - 1];
    if (Array.isArray(parent)) parent.splice(key, 1);
    else delete parent[key];
    return copy;
  };
  const show = (path) => (path.length === 0 ? '(root)' : path.join('.'));
  const FREE = new Set(['input', 'data', 'before', 'after', 'futureField', 'futureHint', 'inputSchema', 'nested', '__proto__']);

  /** Object and array nodes of a message, not inside free-form JSON. */
  function nodes(value) {
    const out = [];
    (function walk(node, path) {
      if (node === null || typeof node !== 'object' || node instanceof Raw) return;
      out.push([path, node]);
      for (const key of Object.keys(node)) {
        if (FREE.has(key) || (Array.isArray(node) && Number(key) > 1)) continue;
        walk(node[key], [...path, Array.isArray(node) ? Number(key) : key]);
      }
    })(value, []);
    return out;
  }

  /**
   * Mutations of one valid message: all of them when `budget` is Infinity
   * (`full` then also tries every sample), else `budget` picked at random.
   */
  function mutateAll(note, message, budget) {
    const full = budget === Infinity;
    const candidates = [];
    const emit = (make, what) => candidates.push([make, what]);
    const list = nodes(message);
    for (const [path, node] of list) {
      if (Array.isArray(node)) {
        if (node.length > 0) emit(() => removeAt(message, [...path, 0]), `remove ${show([...path, 0])}`);
        emit(() => setAt(message, [...path, node.length], null), `append null to ${show(path)}`);
        emit(() => setAt(message, [...path, node.length], 'x'), `append "x" to ${show(path)}`);
        emit(() => setAt(message, [...path, node.length], {}), `append {} to ${show(path)}`);
        if (node.length > 0) emit(() => setAt(message, [...path, node.length], clone(node[0])), `duplicate ${show([...path, 0])}`);
        continue;
      }
      // An extra property on every object.
      emit(() => setAt(message, [...path, 'extra'], 1), `extra property at ${show(path)}`);
      if (full || path.length > 0) {
        const key = pick(['__proto__', 'constructor', 'toString', '', 'é', 'Protocol', 'CLIENTID', 'hasOwnProperty']);
        const extra = pick([true, null, {}]);
        emit(() => setAt(message, [...path, key], clone(extra)), `extra key ${JSON.stringify(key)} at ${show(path)}`);
      }
      for (const key of Object.keys(node)) {
        const at = [...path, key];
        emit(() => removeAt(message, at), `remove ${show(at)}`);
        const retypes = full ? RETYPES : shuffle([...RETYPES]).slice(0, 4);
        for (const [label, replacement] of retypes) emit(() => setAt(message, at, clone(replacement)), `${show(at)} = ${label}`);
        const current = node[key];
        if (typeof current === 'string') {
          emit(() => setAt(message, at, current.length), `${show(at)} string → number`);
          const samples = full ? UNICODE_STRINGS : [pick(UNICODE_STRINGS)];
          for (const sample of samples) emit(() => setAt(message, at, sample), `${show(at)} = unicode ${JSON.stringify(sample).slice(0, 24)}`);
        }
        if (typeof current === 'number') {
          emit(() => setAt(message, at, String(current)), `${show(at)} number → string`);
          emit(() => setAt(message, at, -current - 1), `${show(at)} negative`);
          emit(() => setAt(message, at, current + 0.5), `${show(at)} fractional`);
        }
        if (typeof current === 'boolean') emit(() => setAt(message, at, String(current)), `${show(at)} boolean → string`);
        if (key === 'rev' || (full && typeof current === 'number')) {
          for (const literal of full ? REV_RAW : shuffle([...REV_RAW]).slice(0, 5)) emit(() => setAt(message, at, raw(literal)), `${show(at)} = ${literal}`);
        }
      }
    }
    // Targeted mutations.
    for (const literal of full ? PROTOCOL_RAW : shuffle([...PROTOCOL_RAW]).slice(0, 4)) emit(() => setAt(message, ['protocol'], raw(literal)), `protocol = ${literal}`);
    for (const type of [...ALL_TYPES, 'Call', 'MANIFEST', 'result ', '', 'unknown', 'ping']) {
      if (type !== message.type) emit(() => setAt(message, ['type'], type), `type = ${JSON.stringify(type)}`);
    }
    for (const [path, node] of list) {
      if (Array.isArray(node)) continue;
      if (typeof node.status === 'string') {
        for (const status of [...STATUSES, 'OK', 'ok ', 'timeout', '', 'success']) {
          if (status !== node.status) emit(() => setAt(message, [...path, 'status'], status), `${show([...path, 'status'])} = ${JSON.stringify(status)}`);
        }
      }
      if (node.status === 'refused') {
        for (const code of [...CODES, 'UNKNOWN_TOOL', 'timeout', '', 'unknown-tool']) {
          if (code !== node.code) emit(() => setAt(message, [...path, 'code'], code), `${show([...path, 'code'])} = ${JSON.stringify(code)} (rev ${'rev' in node ? 'kept' : 'absent'})`);
        }
        if (!('rev' in node)) emit(() => setAt(message, [...path, 'rev'], 3), `${show(path)} gains rev for ${node.code}`);
        if ('rev' in node) emit(() => removeAt(message, [...path, 'rev']), `${show(path)} loses rev for ${node.code}`);
      }
      if (node.status === 'cancelled') {
        for (const by of [...BY, 'user', 'Operator', '', 'timeout']) {
          if (by !== node.by) emit(() => setAt(message, [...path, 'by'], by), `${show([...path, 'by'])} = ${JSON.stringify(by)}`);
        }
      }
      if (typeof node.llmName === 'string') {
        for (const name of full ? [...BAD_NAMES, ...GOOD_NAMES] : [pick(BAD_NAMES), pick(GOOD_NAMES)]) emit(() => setAt(message, [...path, 'name'], name), `${show([...path, 'name'])} = ${JSON.stringify(name).slice(0, 24)} (${name.length})`);
        for (const name of full ? [...BAD_LLM_NAMES, ...GOOD_LLM_NAMES] : [pick(BAD_LLM_NAMES)]) emit(() => setAt(message, [...path, 'llmName'], name), `${show([...path, 'llmName'])} = ${JSON.stringify(name).slice(0, 24)} (${name.length})`);
        for (const mode of ['stepwise', 'Stepwise', 'wizard', '', null, 1]) emit(() => setAt(message, [...path, 'mode'], mode), `${show([...path, 'mode'])} = ${JSON.stringify(mode)}`);
        for (const key of HINT_KEYS) {
          for (const hint of ['true', 1, null, 0, [], {}]) emit(() => setAt(message, [...path, 'hints', key], hint), `${show([...path, 'hints', key])} = ${JSON.stringify(hint)}`);
        }
      }
      if (path.length > 0 && ('before' in node || 'after' in node || (path.at(-2) === 'changes'))) {
        emit(() => removeAt(message, [...path, 'before']), `${show(path)} without before`);
        emit(() => removeAt(message, [...path, 'after']), `${show(path)} without after`);
      }
    }
    // Free-form JSON may hold anything.
    for (const key of ['input', 'data']) {
      const path = key === 'input' ? ['input'] : ['result', 'data'];
      if (key === 'input' ? message.type === 'call' : message.result && message.result.status === 'ok') {
        for (const [kind, value] of full ? jsonKinds() : [pick(jsonKinds())]) emit(() => setAt(message, path, value), `${show(path)} = ${kind}`);
      }
    }
    const chosen = full ? candidates : shuffle(candidates).slice(0, budget);
    for (const [make, what] of chosen) add(make(), `mutant of ${note}: ${what}`);
  }

  // Every mutation of one representative per message type and result variant;
  // a random sample of mutations for every other valid message.
  const FULL = new Set([
    'manifest empty tools',
    'manifest several tools with titles',
    'manifest all hints and stepwise',
    'manifest unknown properties in entry and hints',
    'changed rev 7',
    'result ok without data',
    'result ok data object',
    'result invalid many issues',
    ...CODES.map((code) => `result refused ${code}`),
    'result needs_confirmation no changes',
    'result needs_confirmation changes',
    ...BY.map((by) => `result cancelled ${by}`),
    'result error',
    ...STATUSES.map((status) => `confirmed status ${status}`),
    'call with rev',
    'call input object',
    'describe',
    'cancel',
  ]);
  for (const [note, message] of valid) {
    if (FULL.has(note)) mutateAll(note, message, Infinity);
    else if (note.startsWith('random')) mutateAll(note, message, 4);
    else mutateAll(note, message, 12);
  }

  // -------------------------------------------------------------------------
  // Hand-written texts.

  const literal = [
    ['top-level array', '[]'],
    ['top-level array of a message', '[{"protocol":1,"type":"cancel","clientId":"c","id":"i"}]'],
    ['top-level string', '"call"'],
    ['top-level empty string', '""'],
    ['top-level number', '1'],
    ['top-level zero', '0'],
    ['top-level float', '-1.5e3'],
    ['top-level null', 'null'],
    ['top-level true', 'true'],
    ['top-level false', 'false'],
    ['empty object', '{}'],
    ['protocol only', '{"protocol":1}'],
    ['protocol and type only', '{"protocol":1,"type":"call"}'],
    ['duplicate keys, last protocol wins (valid)', '{"protocol":2,"type":"cancel","clientId":"c","id":"i","protocol":1}'],
    ['duplicate keys, last protocol wins (invalid)', '{"protocol":1,"type":"cancel","clientId":"c","id":"i","protocol":2}'],
    ['duplicate keys, last type wins', '{"protocol":1,"type":"manifest","clientId":"c","id":"i","type":"cancel"}'],
    ['escaped strings', '{"protocol":1,"type":"cancel","clientId":"\\u00e9\\/\\u65e5\\ud83d\\ude00","id":"\\u0000"}'],
    ['escaped empty id', '{"protocol":1,"type":"cancel","clientId":"c","id":"\\u0000"}'],
    ['escaped type', '{"protocol":1,"type":"\\u0063ancel","clientId":"c","id":"i"}'],
    ['escaped key', '{"protocol":1,"\\u0074ype":"cancel","clientId":"c","id":"i"}'],
    ['rev 7.0 in changed', '{"protocol":1,"type":"changed","clientId":"c","rev":7.0}'],
    ['rev 7 in changed', '{"protocol":1,"type":"changed","clientId":"c","rev":7}'],
    ['protocol 1.0 in cancel', '{"protocol":1.0,"type":"cancel","clientId":"c","id":"i"}'],
    ['protocol 1E0 in cancel', '{"protocol":1E0,"type":"cancel","clientId":"c","id":"i"}'],
    ['whitespace everywhere', '\n\t{ "protocol" :\t1 ,\r\n "type" : "describe" , "clientId" : "c" , "id" : "i" , "tool" : "t" }\n'],
    ['refused stale rev 1.0', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"refused","code":"stale","message":"m","rev":1.0}}'],
    ['refused busy rev null', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"refused","code":"busy","message":"m","rev":null}}'],
    ['ok with data null', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"ok","data":null}}'],
    ['call input null', '{"protocol":1,"type":"call","clientId":"c","id":"i","tool":"t","input":null}'],
    ['call input missing', '{"protocol":1,"type":"call","clientId":"c","id":"i","tool":"t"}'],
    ['call rev null', '{"protocol":1,"type":"call","clientId":"c","id":"i","rev":null,"tool":"t","input":{}}'],
    ['call tool empty', '{"protocol":1,"type":"call","clientId":"c","id":"i","tool":"","input":{}}'],
    ['hints null', '{"protocol":1,"type":"manifest","clientId":"c","rev":0,"tools":[{"name":"a","llmName":"a","description":"d","hints":null}]}'],
    ['hints array', '{"protocol":1,"type":"manifest","clientId":"c","rev":0,"tools":[{"name":"a","llmName":"a","description":"d","hints":[]}]}'],
    ['tools object', '{"protocol":1,"type":"manifest","clientId":"c","rev":0,"tools":{}}'],
    ['tools entry null', '{"protocol":1,"type":"manifest","clientId":"c","rev":0,"tools":[null]}'],
    ['issue not object', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"invalid","issues":["email"]}}'],
    ['changes entry not object', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"needs_confirmation","confirmId":"x","summary":"s","changes":[1]}}'],
    ['result is array', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":[{"status":"ok"}]}'],
    ['result is null', '{"protocol":1,"type":"confirmed","clientId":"c","confirmId":"x","result":null}'],
    ['result status missing', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"data":1}}'],
    ['result status null', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":null}}'],
    ['result with two statuses merged', '{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"error","message":"m","by":"operator"}}'],
    ['deep input 100 with escapes', `{"protocol":1,"type":"call","clientId":"c","id":"i","tool":"t","input":${'['.repeat(99)}"\\"[{"${']'.repeat(99)}}`],
    ['brackets inside strings', '{"protocol":1,"type":"call","clientId":"[[[[{{{{","id":"]]]}}}","tool":"t","input":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}'],
  ];
  for (const [note, json] of literal) addText(json, `literal: ${note}`);

  // Top-level non-objects wrapping valid messages, and valid messages as strings.
  for (const [note, message] of valid.slice(0, 40)) {
    add([message], `array around: ${note}`);
    add(JSON.stringify(message), `string holding: ${note}`);
    add({ message }, `wrapped in {message}: ${note}`);
  }

  return entries;
}
