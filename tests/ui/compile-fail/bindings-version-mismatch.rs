// Bindings written by another toolbind-codegen release name another interface version:
// the runtime says to use matching releases, instead of listing missing items.
toolbind::__bindings_version!(2);

fn main() {}
