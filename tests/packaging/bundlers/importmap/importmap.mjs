// The import map of a page that loads its packages without a bundler, each
// from its installed folder served at `base`. An import map only maps names
// to URLs: it neither reads the exports map nor adds `.js`, so each subpath
// of a package's exports map gets its own entry (what a user writes by hand,
// or a tool such as JSPM generates), besides the folder itself for files
// named directly.
const CONDITIONS = ['browser', 'import', 'module', 'default'];

function target(value) {
  if (typeof value === 'string') return value;
  for (const [condition, inner] of Object.entries(value ?? {})) {
    if (CONDITIONS.includes(condition)) {
      const found = target(inner);
      if (found) return found;
    }
  }
  return undefined;
}

/** `packages`: [{ pkg (its package.json), base (the URL of its folder, ending in /) }]. */
export function importMap(packages) {
  const imports = {};
  for (const { pkg, base } of packages) {
    imports[`${pkg.name}/`] = base;
    const exports = typeof pkg.exports === 'object' && !Object.keys(pkg.exports).some((key) => key.startsWith('.'))
      ? { '.': pkg.exports }
      : pkg.exports ?? { '.': pkg.module ?? pkg.main ?? './index.js' };
    for (const [subpath, value] of Object.entries(typeof exports === 'string' ? { '.': exports } : exports)) {
      const file = target(value);
      if (file && !subpath.includes('*')) imports[pkg.name + subpath.slice(1)] = base + file.replace(/^\.\//, '');
    }
  }
  // What @toolmark/bridge-wasm needs of an import map, as its README documents it: at most one line.
  // toolmark:extra-begin
  // toolmark:extra-end
  return { imports };
}
