// The import map of a page that loads the package without a bundler, from
// its installed folder served at `base`. An import map only maps names to
// URLs: it neither reads the exports map nor adds `.js`, so each subpath of
// the exports map gets its own entry (what a user writes by hand, or a tool
// such as JSPM generates), besides the folder itself for files named directly.
const CONDITIONS = ['browser', 'import', 'default'];

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

export function importMap(pkg, base) {
  const imports = { [`${pkg.name}/`]: base };
  for (const [subpath, value] of Object.entries(pkg.exports)) {
    const file = target(value);
    if (file && !subpath.includes('*')) imports[pkg.name + subpath.slice(1)] = base + file.replace(/^\.\//, '');
  }
  // What @toolmark/bridge-wasm needs of an import map, as its README documents it: at most one line.
  // toolmark:extra-begin
  // toolmark:extra-end
  return { imports };
}
