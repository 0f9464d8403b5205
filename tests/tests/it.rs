//! The workspace's integration tests, one module per file (a test is `FILE::NAME`), in one
//! binary: one link instead of one per file. Apart: `outside` (run again as another user).

mod build_e2e;
mod compat;
mod compat_properties;
mod config;
mod docs_front;
mod docs_links;
mod frontends;
mod fuzz_corpus;
mod macro_rebuild;
mod properties;
mod rebuild;
mod rig;
mod shipped_tools;
