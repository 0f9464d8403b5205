#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc = include_str!("../README.md")]

mod diagnostic;
mod file;
mod from_schema;
/// Not public API: how TOOL.md names become Rust identifiers (used by property tests).
#[doc(hidden)]
pub mod ident;
mod json;
mod load;
pub mod mcp;
pub mod model;
mod parse;
pub mod prompt;
pub mod schema;
#[doc(hidden)]
pub mod schema_work;
mod skill;
mod validate;

#[cfg(feature = "rust")]
mod config;
#[cfg(feature = "rust")]
#[cfg_attr(docsrs, doc(cfg(feature = "rust")))]
pub mod emit;
#[cfg(feature = "rust")]
mod rustdoc;

#[cfg(feature = "rust")]
#[cfg_attr(docsrs, doc(cfg(feature = "rust")))]
pub use config::{Config, Error, Generated};

/// Not public API: "did you mean" for the runtime's messages.
#[doc(hidden)]
pub use diagnostic::suggest;
pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use file::{
    FolderFileError, FolderFileErrorKind, MAX_TOOL_FILE_BYTES, find_entry, read_folder_file,
    read_tool_file, resolve_in_folder,
};
/// Not public API: the file rules toolbind's own runtime and CLI share.
#[doc(hidden)]
pub use file::{read_regular_file, read_regular_file_no_follow};
pub use load::{load_tools, parse_tool_dir, parse_tool_md, tool_folders, warnings};
pub use model::TOOL_FILE;
pub use model::{
    Approval, Ask, Input, InputType, Language, OutputField, OutputType, PLAIN_CALL_TIMEOUT_SECS,
    TaskSupport, ToolSpec,
};
pub use parse::{read_name, read_version};
pub use skill::{FrontmatterError, skill_frontmatter};
/// Not public API: the cross-tool checks, for toolbind's fuzz targets.
#[doc(hidden)]
pub use validate::check_set;
pub use validate::{Options, folder_name_warnings};
