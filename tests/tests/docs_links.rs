//! The documentation a newcomer reads holds together: every relative link in the README,
//! the pages of `docs/`, the changelog, the benchmarks and the tests' README points at a
//! file that exists and, for a `#section` link, at a heading that exists; the README stays
//! a front page, not a manual; and every page of `docs/` opens by saying what it covers.
//!
//! Links are read with pulldown-cmark, the Markdown parser codegen already uses for TOOL.md
//! bodies, so a link inside a code block or a code span is not taken for one, and
//! reference-style links are resolved as GitHub resolves them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The workspace root: the tests crate lives in `<root>/tests`.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate has a parent folder")
        .to_path_buf()
}

/// The pages whose links are checked, relative to the root.
fn checked_pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    pages.extend(docs_pages());
    for page in ["CHANGELOG.md", "BENCHMARKS.md", "tests/README.md"] {
        pages.push(PathBuf::from(page));
    }
    pages
}

/// Every `docs/*.md`, sorted, relative to the root.
fn docs_pages() -> Vec<PathBuf> {
    let dir = root().join("docs");
    let mut pages: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under the root")
                .to_path_buf()
        })
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "docs/ holds no Markdown page");
    pages
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The Markdown features GitHub renders, so that a link in a table cell counts as one.
fn parser(text: &str) -> Parser<'_> {
    Parser::new_ext(
        text,
        Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH,
    )
}

/// The anchor GitHub gives a heading: lowercased, spaces turned into `-`, and every
/// character that is not a letter, a digit, `-` or `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every anchor a page's headings give, as GitHub numbers repeated ones: the second
/// "Changed" is `changed-1`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(heading.take().unwrap_or_default().trim());
                let n = seen.entry(base.clone()).or_insert(0);
                anchors.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    anchors
}

/// A link as written: its target and the line it is on.
struct Link {
    line: usize,
    target: String,
}

fn links(text: &str) -> Vec<Link> {
    parser(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some(Link {
                line: text[..range.start].matches('\n').count() + 1,
                target: dest_url.into_string(),
            }),
            _ => None,
        })
        .collect()
}

/// Links that leave the repository are not checked: the test must not need the network.
fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// `a/../b` -> `b`, without touching the filesystem, so the message shows a clean path.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Why a link does not resolve, or `None` when it does.
fn problem(
    page: &Path,
    target: &str,
    anchor_cache: &mut BTreeMap<PathBuf, BTreeSet<String>>,
) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        root().join(page)
    } else {
        normalise(
            &root()
                .join(page)
                .parent()
                .expect("a page is in a folder")
                .join(path),
        )
    };
    if !file.exists() {
        return Some(format!("{} does not exist", shown(&file)));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|x| x != "md") {
        return Some(format!(
            "#{anchor} points into {}, which is not a Markdown page",
            shown(&file)
        ));
    }
    let known = anchor_cache
        .entry(file.clone())
        .or_insert_with(|| anchors(&read(&file)));
    if known.contains(anchor) {
        None
    } else {
        Some(format!(
            "{} has no heading whose anchor is #{anchor}",
            shown(&file)
        ))
    }
}

/// A path as the repository names it.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_relative_link_resolves() {
    let mut anchor_cache = BTreeMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in checked_pages() {
        let text = read(&root().join(&page));
        for link in links(&text) {
            if is_external(&link.target) {
                continue;
            }
            checked += 1;
            if let Some(why) = problem(&page, &link.target, &mut anchor_cache) {
                broken.push(format!(
                    "{}:{}: ({}): {why}",
                    page.display(),
                    link.line,
                    link.target
                ));
            }
        }
    }
    assert!(
        checked > 0,
        "no relative link found: is the parser reading the pages?"
    );
    assert!(
        broken.is_empty(),
        "{} broken link(s) in the documentation:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn readme_is_a_front_page() {
    // What toolbind is, the quick start, the two ways in and the links fit in 16 KiB; the
    // reference material belongs in docs/, where it can grow.
    let limit = 16 * 1024;
    let size = fs::metadata(root().join("README.md"))
        .expect("README.md exists")
        .len();
    assert!(
        size <= limit,
        "README.md is {size} bytes, over {limit}: move reference material into docs/"
    );
}

#[test]
fn every_docs_page_opens_with_what_it_covers() {
    // A reader who lands on a page from a link learns at once whether it is the one they
    // need: a title, then a paragraph saying what the page covers.
    let mut wrong = Vec::new();
    for page in docs_pages() {
        let text = read(&root().join(&page));
        // Block-level starts only: a code span or emphasis inside the title is not a block.
        let mut blocks = parser(&text).filter_map(|event| match event {
            Event::Start(Tag::Heading { level, .. }) => Some(format!("heading {level:?}")),
            Event::Start(Tag::Paragraph) => Some("paragraph".to_owned()),
            Event::Start(
                tag @ (Tag::CodeBlock(_)
                | Tag::List(_)
                | Tag::Table(_)
                | Tag::BlockQuote(_)
                | Tag::HtmlBlock),
            ) => Some(format!("{tag:?}")),
            _ => None,
        });
        let title = format!("heading {:?}", HeadingLevel::H1);
        let first = blocks.next();
        let second = blocks.next();
        if first.as_deref() != Some(title.as_str()) || second.as_deref() != Some("paragraph") {
            wrong.push(format!(
                "{}: starts with {first:?} then {second:?}, not a `# title` then a paragraph",
                page.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn slugs_follow_github() {
    // The anchors links are checked against must be GitHub's, or a link that works on
    // GitHub would fail here (or the reverse).
    assert_eq!(slug("Quick start"), "quick-start");
    assert_eq!(slug("`toolbind call`"), "toolbind-call");
    assert_eq!(
        slug("What `off` still guarantees"),
        "what-off-still-guarantees"
    );
    assert_eq!(
        slug("Tool folder and the TOOL.md format"),
        "tool-folder-and-the-toolmd-format"
    );
    assert_eq!(slug("`--stateless`"), "--stateless");
    assert_eq!(
        slug("Old argument shapes: `prepareArguments`"),
        "old-argument-shapes-preparearguments"
    );
    let twice = anchors("## Changed\n\ntext\n\n## Changed\n");
    assert!(
        twice.contains("changed") && twice.contains("changed-1"),
        "{twice:?}"
    );
}
