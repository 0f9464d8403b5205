//! TypeScript entries, transpiled in Rust (oxc) for Node 20, which cannot run `.ts`.
//!
//! The output goes to `<cache>/ts/<tool>-<hash>/`, a mirror of the tool folder: every
//! `.ts`/`.mts` module reachable from the entry through relative imports becomes an `.mjs`
//! file with an inline source map (so `node --enable-source-maps` reports `.ts` lines), and
//! every other entry of the folder (`node_modules`, data files, `.js` helpers) is a symlink
//! to the original, so bare imports and relative file reads keep working. The key (SHA-256)
//! covers the folder's file listing and the content of its TypeScript files, so an edited
//! tool gets a fresh mirror; a mirror is built in a temporary folder and renamed into
//! place, so concurrent runtimes never see half of one.
//!
//! The cache is private (see `cache`), and a mirror is trusted only when its `.complete`
//! manifest names the source key it was built from and matches what is on disk: the
//! SHA-256 of every file, the target of every symlink, and nothing else. A mirror that
//! does not match is removed and rebuilt.
//!
//! Relative import specifiers are rewritten to the transpiled files: `./util.ts`,
//! `./util.js` (the NodeNext spelling of a `.ts` module), `./util` and `./dir` (with an
//! `index.ts`) all become the matching `.mjs`. Dynamic `import()` of a `.ts` file is not
//! rewritten.

use std::collections::{BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use oxc::allocator::Allocator;
use oxc::ast::ast::{Statement, StringLiteral};
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

use super::cache::{self, Hasher};
use super::error::{ModuleProblem, TranspileError};

/// A file system step that failed, for `map_err`.
fn io(doing: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TranspileError {
    let path = path.to_path_buf();
    move |source| TranspileError::Io {
        doing,
        path,
        source,
    }
}

/// Transpiles the TypeScript modules of `dir` reachable from `entry` into the cache and
/// returns the path of the entry's `.mjs`.
pub(crate) fn prepare(
    tool_name: &str,
    dir: &Path,
    entry: &str,
    cache: &Path,
) -> Result<PathBuf, TranspileError> {
    let dir = dir
        .canonicalize()
        .map_err(io("cannot read the tool folder", dir))?;
    let mut listing = Vec::new();
    list_files(&dir, Path::new(""), &mut listing)
        .map_err(io("cannot list the tool folder", &dir))?;
    let mut h = Hasher::new();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    h.write(dir.as_os_str().as_encoded_bytes());
    h.write(entry.as_bytes());
    for rel in &listing {
        h.write(b"\0");
        h.write(rel.as_os_str().as_encoded_bytes());
        if is_ts(rel) {
            // A module that cannot be used (outside the folder, too large, special) is
            // keyed by that fact; transpiling fails on it only if the entry imports it.
            match read_module(&dir, rel) {
                Ok(text) => {
                    h.write(b"\x01");
                    h.write(&text);
                }
                Err(_) => h.write(b"\x02"),
            }
        }
    }
    let key = h.hex();
    if let Some(why) = toolbind_codegen::model::path_component_problem(tool_name) {
        return Err(TranspileError::Name {
            name: tool_name.to_owned(),
            why,
        });
    }
    let root = crate::dirs::private_subdir(cache, &["ts"]).map_err(TranspileError::Folder)?;
    let out = root.join(format!("{tool_name}-{key}"));
    let entry_out = out.join(mjs_name(Path::new(entry)));
    if fs::symlink_metadata(&out).is_ok() {
        if verified(&out, &key) {
            return Ok(entry_out);
        }
        // Corrupt, half-removed or not ours to trust: build it again.
        remove(&out)?;
    }

    let tmp = root.join(format!(
        ".tmp-{tool_name}-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let built = build_mirror(&dir, Path::new(entry), &tmp).and_then(|()| {
        let m = manifest(&tmp, &key).map_err(io("cannot hash", &tmp))?;
        fs::write(tmp.join(COMPLETE), m).map_err(io("cannot write", &tmp))
    });
    if let Err(e) = built {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    match fs::rename(&tmp, &out) {
        Ok(()) => {}
        // Another runtime finished the same mirror first; theirs is identical.
        Err(_) if verified(&out, &key) => {
            let _ = fs::remove_dir_all(&tmp);
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(io("cannot write the transpile cache", &out)(e));
        }
    }
    Ok(entry_out)
}

fn build_mirror(dir: &Path, entry: &Path, tmp: &Path) -> Result<(), TranspileError> {
    let mut done = BTreeSet::new();
    let mut queue = VecDeque::from([entry.to_path_buf()]);
    while let Some(rel) = queue.pop_front() {
        if !done.insert(rel.clone()) {
            continue;
        }
        let src = dir.join(&rel);
        let text = read_module(dir, &rel)
            .and_then(|b| String::from_utf8(b).map_err(ModuleProblem::NotUtf8))
            .map_err(|why| TranspileError::Module {
                path: src.clone(),
                why,
            })?;
        let (code, deps) = transpile(&src, &text, dir)?;
        let target = tmp.join(mjs_name(&rel));
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io("cannot write", parent))?;
        }
        fs::write(&target, code).map_err(io("cannot write", &target))?;
        queue.extend(deps);
    }
    fs::create_dir_all(tmp).map_err(io("cannot write", tmp))?;
    link_rest(dir, tmp, Path::new(""), &done).map_err(io("cannot write", tmp))
}

const COMPLETE: &str = ".complete";

fn remove(out: &Path) -> Result<(), TranspileError> {
    let meta = fs::symlink_metadata(out);
    let removed = match meta {
        Ok(m) if m.is_dir() => fs::remove_dir_all(out),
        Ok(_) => fs::remove_file(out),
        Err(_) => Ok(()),
    };
    removed.map_err(io("cannot replace the cache entry", out))
}

/// Whether the mirror at `out` is what its manifest says and was built from `key`.
fn verified(out: &Path, key: &str) -> bool {
    let Ok(meta) = fs::symlink_metadata(out) else {
        return false;
    };
    if !meta.is_dir() {
        return false;
    }
    let Ok(recorded) = fs::read(out.join(COMPLETE)) else {
        return false;
    };
    manifest(out, key).is_ok_and(|m| m.as_bytes() == recorded)
}

/// What a mirror holds: its source key, then every entry (sorted, symlinks not followed)
/// with the SHA-256 of a file's content or the target of a symlink.
fn manifest(out: &Path, key: &str) -> std::io::Result<String> {
    let mut text = format!("toolbind transpile cache 1\nsource {key}\n");
    let mut stack = vec![PathBuf::new()];
    let mut entries = Vec::new();
    while let Some(rel) = stack.pop() {
        for item in fs::read_dir(out.join(&rel))? {
            let item = item?;
            let child = rel.join(item.file_name());
            if child == Path::new(COMPLETE) {
                continue;
            }
            let ty = item.file_type()?;
            let line = if ty.is_symlink() {
                let target = fs::read_link(item.path())?;
                format!("link {} -> {}", child.display(), target.display())
            } else if ty.is_dir() {
                stack.push(child.clone());
                format!("dir {}", child.display())
            } else if ty.is_file() {
                format!(
                    "file {} {}",
                    child.display(),
                    cache::sha256_hex(&fs::read(item.path())?)
                )
            } else {
                return Err(std::io::Error::other("a special file in the cache"));
            };
            entries.push(line);
        }
    }
    entries.sort();
    for e in entries {
        text.push_str(&e);
        text.push('\n');
    }
    Ok(text)
}

/// Symlinks every entry of `dir/rel` that is not a transpiled module or an ancestor of one.
fn link_rest(dir: &Path, tmp: &Path, rel: &Path, done: &BTreeSet<PathBuf>) -> std::io::Result<()> {
    for item in fs::read_dir(dir.join(rel))? {
        let item = item?;
        let child = rel.join(item.file_name());
        if done.contains(&child) {
            continue;
        }
        let dst = tmp.join(&child);
        if item.file_type()?.is_dir() && done.iter().any(|d| d.starts_with(&child)) {
            fs::create_dir_all(&dst)?;
            link_rest(dir, tmp, &child, done)?;
        } else if !dst.exists() {
            std::os::unix::fs::symlink(dir.join(&child), &dst)?;
        }
    }
    Ok(())
}

fn list_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut items: Vec<_> = fs::read_dir(dir.join(rel))?.collect::<Result<_, _>>()?;
    items.sort_by_key(|i| i.file_name());
    for item in items {
        let name = item.file_name();
        let child = rel.join(&name);
        out.push(child.clone());
        let skip = name == "node_modules" || name.as_encoded_bytes().starts_with(b".");
        if item.file_type()?.is_dir() && !skip {
            list_files(dir, &child, out)?;
        }
    }
    Ok(())
}

/// The largest TypeScript module transpiled (or hashed).
const MAX_MODULE_BYTES: u64 = 8 << 20;

/// The text of the module `rel` of the canonical tool folder `dir`, read on the host only
/// when it really is a regular file of that folder: a symlink (of the file or of a folder
/// on the way) that leads out of it is refused, so a tool cannot have the host read a file
/// it was never granted into its transpiled mirror.
fn read_module(dir: &Path, rel: &Path) -> Result<Vec<u8>, ModuleProblem> {
    let src = dir.join(rel);
    let real = src.canonicalize().map_err(ModuleProblem::Resolve)?;
    if !real.starts_with(dir) {
        return Err(ModuleProblem::Escapes);
    }
    toolbind_codegen::read_folder_file(dir, &real, MAX_MODULE_BYTES)
        .map_err(|e| ModuleProblem::Read(e.to_string()))
}

fn is_ts(p: &Path) -> bool {
    let s = p.to_string_lossy();
    (s.ends_with(".ts") || s.ends_with(".mts")) && !s.ends_with(".d.ts") && !s.ends_with(".d.mts")
}

fn mjs_name(p: &Path) -> PathBuf {
    p.with_extension("mjs")
}

/// Transpiles one module; returns the code (with an inline source map) and the tool-relative
/// paths of the TypeScript modules it imports.
fn transpile(src: &Path, text: &str, dir: &Path) -> Result<(String, Vec<PathBuf>), TranspileError> {
    let allocator = Allocator::default();
    let source_type = SourceType::from_path(src)
        .unwrap_or_else(|_| SourceType::ts())
        .with_module(true);
    let parsed = Parser::new(&allocator, text, source_type).parse();
    if !parsed.diagnostics.is_empty() || parsed.panicked {
        return Err(TranspileError::Syntax(render_errors(
            src,
            text,
            &parsed.diagnostics,
        )));
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new()
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program);
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::from_target("node20")
        .map_err(|e| TranspileError::Internal(e.to_string()))?;
    let transformed =
        Transformer::new(&allocator, src, &options).build_with_scoping(scoping, &mut program);
    if !transformed.diagnostics.is_empty() {
        return Err(TranspileError::Syntax(render_errors(
            src,
            text,
            &transformed.diagnostics,
        )));
    }

    let base = src.parent().unwrap_or(dir);
    let mut deps = Vec::new();
    for stmt in program.body.iter_mut() {
        let lit = match stmt {
            Statement::ImportDeclaration(d) => Some(&mut d.source),
            Statement::ExportAllDeclaration(d) => Some(&mut d.source),
            Statement::ExportFromDeclaration(d) => Some(&mut d.source),
            _ => None,
        };
        if let Some(lit) = lit
            && let Some((spec, target)) = rewrite(base, lit.value.as_str())
        {
            set_literal(lit, allocator.alloc_str(&spec));
            if let Ok(rel) = target.strip_prefix(dir) {
                deps.push(rel.to_path_buf());
            }
        }
    }

    let options = CodegenOptions {
        source_map_path: Some(src.to_path_buf()),
        ..CodegenOptions::default()
    };
    let out = Codegen::new().with_options(options).build(&program);
    let mut code = out.code;
    if let Some(map) = out.map {
        code.push_str("\n//# sourceMappingURL=");
        code.push_str(&map.to_data_url());
        code.push('\n');
    }
    Ok((code, deps))
}

fn set_literal<'a>(lit: &mut StringLiteral<'a>, value: &'a str) {
    lit.value = value.into();
    lit.raw = None;
}

/// The rewritten specifier and the `.ts` file it refers to, for a relative import of a
/// TypeScript module.
fn rewrite(base: &Path, spec: &str) -> Option<(String, PathBuf)> {
    if !(spec.starts_with("./") || spec.starts_with("../")) {
        return None;
    }
    let path = base.join(spec);
    let file = |p: &Path| p.is_file().then(|| p.to_path_buf());
    let swap = |from: &str, to: &str| format!("{}{to}", &spec[..spec.len() - from.len()]);
    for (ext, out) in [(".ts", ".mjs"), (".mts", ".mjs")] {
        if spec.ends_with(ext) {
            return file(&path).map(|t| (swap(ext, out), t));
        }
    }
    for (ext, ts) in [(".js", "ts"), (".mjs", "mts")] {
        if spec.ends_with(ext) && !path.exists() {
            return file(&path.with_extension(ts)).map(|t| (swap(ext, ".mjs"), t));
        }
    }
    if path.extension().is_none() || !path.exists() {
        let mut with_ts = path.clone().into_os_string();
        with_ts.push(".ts");
        if let Some(t) = file(Path::new(&with_ts)) {
            return Some((format!("{spec}.mjs"), t));
        }
        if let Some(t) = file(&path.join("index.ts")) {
            return Some((format!("{}/index.mjs", spec.trim_end_matches('/')), t));
        }
    }
    None
}

fn render_errors(src: &Path, text: &str, diags: &[OxcDiagnostic]) -> String {
    let mut out = format!("cannot transpile {}:", src.display());
    for d in diags.iter().take(10) {
        let offset = d.labels.first().map(|l| l.offset()).unwrap_or(0);
        let (line, col) = line_col(text, offset as usize);
        out.push_str(&format!("\n{}:{line}:{col}: {}", src.display(), d.message));
        if let Some(help) = &d.help {
            out.push_str(&format!(" ({help})"));
        }
    }
    out
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_types_and_rewrites_relative_imports() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("index.ts");
        fs::write(dir.path().join("util.ts"), "export const x: number = 1;\n").unwrap();
        let text = "import type { A } from './types';\nimport { x } from './util.js';\n\
                    enum Color { Red, Green }\nexport const y: number = x + Color.Green;\n";
        let (code, deps) = transpile(&src, text, dir.path()).unwrap();
        assert!(code.contains("\"./util.mjs\""), "{code}");
        assert!(!code.contains("./types"), "{code}");
        assert!(
            code.contains("sourceMappingURL=data:application/json"),
            "{code}"
        );
        assert_eq!(
            deps,
            vec![dir.path().join("util.ts").strip_prefix(dir.path()).unwrap()]
        );
    }

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let src = Path::new("/t/index.ts");
        let err = transpile(src, "const a = 1;\nconst = 2;\n", Path::new("/t")).unwrap_err();
        assert!(matches!(err, TranspileError::Syntax(_)), "{err:?}");
        assert!(err.to_string().contains("/t/index.ts:2:"), "{err}");
    }
}
