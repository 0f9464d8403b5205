//! A search index over tools, for a model (or a person) who knows what they want done but
//! not which of many tools does it.
//!
//! [`ToolIndex::build`] reads every tool of a [`Registry`]: its name, label, description,
//! system-prompt line and guidelines, inputs (names, titles, descriptions, allowed
//! values), docs and, for an MCP tool, its server's name. [`ToolIndex::search`] ranks them
//! for a query by BM25F: each field has a weight (a word in the name counts more than one
//! in the docs) and its own length normalisation; a query word also brings its common
//! synonyms at a lower weight ("remove" finds `delete_file`). Ranking is deterministic:
//! equal scores are ordered by name.
//!
//! [`Runtime::tool_index`](crate::Runtime::tool_index) keeps an index of the runtime's
//! current tool list, rebuilt when that list changes (a server's `tools/list_changed`, a
//! server that came up later).
//!
//! ```
//! # fn demo(registry: &toolbind::Registry) -> Result<(), toolbind::index::QueryError> {
//! let index = toolbind::index::ToolIndex::build(registry);
//! for hit in index.search("download a web page as markdown", 5)? {
//!     println!("{:.3} {}", hit.score, hit.name);
//! }
//! # Ok(())
//! # }
//! ```

mod fields;
mod shapes;
pub(crate) mod synonyms;
pub(crate) mod words;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::{Registry, ToolInfo};

/// The longest query taken, in bytes. A longer one is refused ([`QueryError::TooLong`]):
/// a request for a tool is a sentence or two, and a megabyte pasted by mistake is better
/// told than searched.
pub const MAX_QUERY_BYTES: usize = 4096;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;

/// A tool found by [`ToolIndex::search`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Hit {
    /// The name a model calls the tool by.
    pub name: String,
    /// How well the tool matches, BM25F: only the order means something, and only within
    /// one index.
    pub score: f64,
    /// The MCP server's name, for a server's tool.
    pub server: Option<String>,
}

/// Why a query was not searched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// The query has no words that can match anything: empty, blank or punctuation only
    /// (or only words as common as "the").
    Empty,
    /// The query is longer than [`MAX_QUERY_BYTES`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Empty => f.write_str(
                "the query has no words to search for: say what the tool should do, \
                 e.g. \"read a file\"",
            ),
            QueryError::TooLong { bytes } => write!(
                f,
                "the query is {bytes} bytes; the most taken is {MAX_QUERY_BYTES}: \
                 describe the tool you want in a sentence or two"
            ),
        }
    }
}

impl std::error::Error for QueryError {}

/// One tool in the index.
#[derive(Debug, Clone)]
struct Doc {
    name: String,
    server: Option<String>,
}

/// A lexical index of tools (module docs: [`index`](self)). Cheap to share behind an
/// `Arc`; immutable once built.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// Term -> its number.
    terms: HashMap<String, u32>,
    /// Per term number: (tool, its BM25F pseudo-frequency of the term), tools in
    /// ascending order.
    postings: Vec<Vec<(u32, f32)>>,
    by_name: HashMap<String, u32>,
    /// The ASCII terms of 4 to [`MAX_TYPO_LEN`] bytes, by length: the candidates of a
    /// misspelt word (one edit changes the length by one at most).
    by_len: Vec<Vec<String>>,
}

impl ToolIndex {
    /// Indexes every tool of `registry`.
    pub fn build(registry: &Registry) -> ToolIndex {
        let tools: Vec<_> = registry.iter().collect();
        let mut reader = fields::Reader::default();
        let fielded: Vec<fields::Fielded> = tools.iter().map(|t| reader.read(t)).collect();
        let averages = fields::averages(&fielded);
        let terms = reader.terms.ids;
        let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); terms.len()];
        for (id, doc) in fielded.iter().enumerate() {
            for (term, tf) in doc.pseudo_frequencies(&averages) {
                postings[term as usize].push((id as u32, tf));
            }
        }
        let docs: Vec<Doc> = tools
            .iter()
            .map(|t| Doc {
                name: t.name().to_owned(),
                server: t.spec().mcp.as_ref().map(|m| m.server.clone()),
            })
            .collect();
        let by_name = docs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i as u32))
            .collect();
        let mut by_len = vec![Vec::new(); MAX_TYPO_LEN + 1];
        for t in terms
            .keys()
            .filter(|t| t.is_ascii() && (4..=MAX_TYPO_LEN).contains(&t.len()))
        {
            by_len[t.len()].push(t.clone());
        }
        for bucket in &mut by_len {
            bucket.sort();
        }
        ToolIndex {
            docs,
            terms,
            postings,
            by_name,
            by_len,
        }
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// No tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The `limit` tools that best match `query`, best first; fewer when fewer match at
    /// all (an empty list: no tool shares a word with the query). A query that is exactly
    /// a tool's name puts that tool first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, QueryError> {
        if query.len() > MAX_QUERY_BYTES {
            return Err(QueryError::TooLong { bytes: query.len() });
        }
        let mut weighted = query_terms(query);
        self.add_misspelt(&mut weighted);
        if weighted.is_empty() && !self.by_name.contains_key(query.trim()) {
            return Err(QueryError::Empty);
        }
        let mut scores = vec![0f32; self.docs.len()];
        let n = self.docs.len() as f32;
        for (term, weight) in &weighted {
            let Some(&id) = self.terms.get(term) else {
                continue;
            };
            let list = &self.postings[id as usize];
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                scores[doc as usize] += weight * idf * tf / (K1 + tf);
            }
        }
        if let Some(&exact) = self.by_name.get(query.trim()) {
            let top = scores.iter().cloned().fold(0f32, f32::max);
            scores[exact as usize] = top + 1.0;
        }
        let mut ranked: Vec<(u32, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(_, s)| s > 0.0)
            .map(|(i, s)| (i as u32, s))
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1).then_with(|| {
                self.docs[a.0 as usize]
                    .name
                    .cmp(&self.docs[b.0 as usize].name)
            })
        });
        ranked.truncate(limit);
        Ok(ranked
            .into_iter()
            .map(|(i, s)| {
                let d = &self.docs[i as usize];
                Hit {
                    name: d.name.clone(),
                    score: f64::from(s),
                    server: d.server.clone(),
                }
            })
            .collect())
    }
}

impl ToolIndex {
    /// Typo tolerance: a query's own word of five letters or more that no tool has brings
    /// the tools' words one edit away (a letter added, dropped, changed, or two swapped)
    /// at [`TYPO_WEIGHT`], in sorted order (the scores' sums stay deterministic). Only the
    /// words of one length more or less are compared, at most [`MAX_TYPO_SCAN`] of them per
    /// misspelt word (a catalog with more words of those lengths gets no typo tolerance
    /// for that word rather than a slow query).
    fn add_misspelt(&self, weighted: &mut Vec<(String, f32)>) {
        let unknown: Vec<String> = weighted
            .iter()
            .filter(|(t, w)| {
                *w == 1.0
                    && t.is_ascii()
                    && (5..MAX_TYPO_LEN).contains(&t.len())
                    && !self.terms.contains_key(t)
            })
            .map(|(t, _)| t.clone())
            .take(MAX_TYPO_WORDS)
            .collect();
        for word in unknown {
            let lens = word.len() - 1..=word.len() + 1;
            let candidates: usize = lens.clone().map(|l| self.by_len[l].len()).sum();
            if candidates > MAX_TYPO_SCAN {
                continue;
            }
            let mut near: Vec<&String> = lens
                .flat_map(|l| &self.by_len[l])
                .filter(|k| one_edit(word.as_bytes(), k.as_bytes()))
                .collect();
            near.sort();
            for k in near {
                if !weighted.iter().any(|(t, _)| t == k) {
                    weighted.push((k.clone(), TYPO_WEIGHT));
                }
            }
        }
    }
}

/// A misspelt word's stand-ins' weight.
const TYPO_WEIGHT: f32 = 0.6;
/// The most unknown words of one query looked up for typos.
const MAX_TYPO_WORDS: usize = 4;
/// The longest word looked up for typos (and its candidates' longest).
const MAX_TYPO_LEN: usize = 24;
/// The most candidate words compared with one misspelt word.
const MAX_TYPO_SCAN: usize = 50_000;

/// Whether `a` and `b` (ASCII) are one edit apart: one letter added, dropped or changed, or
/// two neighbours swapped.
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    if a.len().abs_diff(b.len()) > 1 || a == b || !b.is_ascii() {
        return false;
    }
    let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[start..], &b[start..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Greater => ra[1..] == *rb,
        std::cmp::Ordering::Less => *ra == rb[1..],
    }
}

/// A query's terms with their weights: its own words at 1, the English words its words
/// in other languages stand for at [`synonyms::TRANSLATED_WEIGHT`], the synonyms of both
/// at [`synonyms::WEIGHT`] (a word both said and implied keeps the higher), in first-seen
/// order.
fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::new();
    let mut put = |term: &str, w: f32| match out.iter_mut().find(|(t, _)| t == term) {
        Some(e) => e.1 = e.1.max(w),
        None => out.push((term.to_owned(), w)),
    };
    // Words, and things named (a path, a URL, a #channel): their words count for less,
    // what they are for more.
    let mut own = Vec::new();
    for chunk in query.split_whitespace() {
        match shapes::concepts(chunk) {
            None => {
                for t in words::term_list(chunk) {
                    put(&t, 1.0);
                    own.push(t);
                }
            }
            Some(concepts) => {
                for t in words::term_list(chunk) {
                    put(&t, shapes::LITERAL_WEIGHT);
                }
                for c in concepts {
                    for t in words::term_list(c) {
                        put(&t, shapes::CONCEPT_WEIGHT);
                    }
                }
            }
        }
    }
    let translated = synonyms::translated(&query.to_lowercase(), &own);
    for t in &translated {
        put(t, synonyms::TRANSLATED_WEIGHT);
    }
    own.extend(translated);
    for t in &own {
        for s in synonyms::of(t) {
            put(s, synonyms::WEIGHT);
        }
    }
    out
}

/// The index of a runtime's current tool list, rebuilt when the list changes.
#[derive(Default)]
pub(crate) struct Cached(Mutex<Option<(Vec<ToolInfo>, Arc<ToolIndex>)>>);

impl Cached {
    /// The index of `list`: the one kept when `list` holds the very tools it was built
    /// from (the same loaded descriptions, in the same order), else a new one. The kept
    /// tools are held, so a description cannot be freed and another take its place.
    pub(crate) fn of(&self, list: &Registry) -> Arc<ToolIndex> {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((tools, index)) = kept.as_ref()
            && tools.len() == list.len()
            && tools.iter().zip(list.iter()).all(|(a, b)| a.same(b))
        {
            return index.clone();
        }
        let index = Arc::new(ToolIndex::build(list));
        *kept = Some((list.iter().cloned().collect(), index.clone()));
        index
    }
}

#[cfg(test)]
mod tests;
