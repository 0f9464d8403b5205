//! The code generator's integration tests, one module per file (a test is `FILE::NAME`), in
//! one binary: one link instead of one per file.

mod format;
mod golden;
mod hostile;
mod mcp;
mod nested;
mod schema;
mod validate;
