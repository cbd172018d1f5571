// wasm-bindgen gives each class it exports `free()`, and `[Symbol.dispose]` (what
// `using` calls) as the same function. Either releases the Rust object but not what
// it holds in the page (listeners, timers), and every later call on the object
// fails inside the module, which leaves the module's stack unbalanced: enough of
// them and the module traps for good. The package's objects end through their
// API (`close()`, `dispose()`, the function `tm.use` returns); the collector frees
// them once unreachable. JS because the glue defines these on the classes.
export function endOnlyThroughApi(...classes) {
  for (const { prototype } of classes) {
    delete prototype.free;
    if (typeof Symbol.dispose === 'symbol') delete prototype[Symbol.dispose];
  }
}
