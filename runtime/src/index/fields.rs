//! A tool's text by field, and BM25F's per-tool term frequencies.

use std::collections::HashMap;

use toolbind_codegen::model::Input;

use crate::ToolInfo;

use super::words;

/// The fields, in the order of [`WEIGHTS`] and [`NORMS`].
const NAME: usize = 0;
const SERVER: usize = 1;
const LABEL: usize = 2;
const DESCRIPTION: usize = 3;
const PROMPT: usize = 4;
const INPUTS: usize = 5;
const DOCS: usize = 6;
const FIELDS: usize = 7;

/// How much a word counts in each field: a word of the name most, one of the docs least.
const WEIGHTS: [f32; FIELDS] = [3.0, 2.0, 2.0, 1.0, 1.0, 0.3, 0.3];
/// How much each field's length discounts its words (BM25's `b`): none for the server's
/// name, little for a tool's name, the usual 0.75 for prose.
const NORMS: [f32; FIELDS] = [0.3, 0.0, 0.5, 0.75, 0.75, 0.75, 0.75];

/// The most terms read from one tool's docs and inputs, so that a hostile catalog's
/// megabyte of docs costs no more than a long page.
const MAX_FIELD_TERMS: usize = 4000;
/// How deep nested inputs are read.
const MAX_DEPTH: usize = 4;

/// Every term of the tools being indexed, each with its number.
#[derive(Default)]
pub(super) struct Terms {
    pub(super) ids: HashMap<String, u32>,
}

impl Terms {
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(term.to_owned(), id);
        id
    }
}

/// One tool's terms: how often each occurs in each field, and each field's length.
pub(super) struct Fielded {
    counts: Vec<(u32, [u16; FIELDS])>,
    lengths: [u32; FIELDS],
}

/// Reads tools into [`Fielded`]s, numbering their terms as it goes.
#[derive(Default)]
pub(super) struct Reader {
    pub(super) terms: Terms,
    /// Per term number: 1 + its place in the current tool's `counts`, or 0.
    slots: Vec<u32>,
}

impl Reader {
    pub(super) fn read(&mut self, tool: &ToolInfo) -> Fielded {
        let mut f = Fielded {
            counts: Vec::new(),
            lengths: [0; FIELDS],
        };
        let spec = tool.spec();
        self.add(&mut f, NAME, tool.name());
        if let Some(origin) = &spec.mcp {
            self.add(&mut f, SERVER, &origin.server);
            if origin.name != tool.name() {
                self.add(&mut f, NAME, &origin.name);
            }
        }
        if tool.label() != tool.name() {
            self.add(&mut f, LABEL, tool.label());
        }
        self.add(&mut f, DESCRIPTION, tool.description());
        if let Some(snippet) = &spec.prompt_snippet {
            self.add(&mut f, PROMPT, snippet);
        }
        for g in tool.prompt_guidelines() {
            self.add(&mut f, PROMPT, g);
        }
        for input in &spec.inputs {
            self.add_input(&mut f, input, 0);
        }
        // An MCP tool's docs are its description again; counted once.
        if spec.mcp.is_none() {
            self.add(&mut f, DOCS, tool.docs());
        }
        for (id, _) in &f.counts {
            self.slots[*id as usize] = 0;
        }
        f
    }

    fn add(&mut self, f: &mut Fielded, field: usize, text: &str) {
        let limit = if field == DOCS || field == INPUTS {
            MAX_FIELD_TERMS
        } else {
            MAX_FIELD_TERMS / 4
        };
        words::terms(text, &mut |t| {
            if f.lengths[field] as usize >= limit {
                return;
            }
            f.lengths[field] += 1;
            let id = self.terms.id(t) as usize;
            if self.slots.len() <= id {
                self.slots.resize(id + 1, 0);
            }
            if self.slots[id] == 0 {
                f.counts.push((id as u32, [0; FIELDS]));
                self.slots[id] = f.counts.len() as u32;
            }
            let c = &mut f.counts[self.slots[id] as usize - 1].1[field];
            *c = c.saturating_add(1);
        });
    }

    fn add_input(&mut self, f: &mut Fielded, input: &Input, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        self.add(f, INPUTS, &input.name);
        if let Some(title) = &input.title {
            self.add(f, INPUTS, title);
        }
        self.add(f, INPUTS, &input.description);
        for v in &input.values {
            self.add(f, INPUTS, &v.wire);
        }
        for p in &input.properties {
            self.add_input(f, p, depth + 1);
        }
        if let Some(items) = &input.items {
            self.add_input(f, items, depth + 1);
        }
    }
}

impl Fielded {
    /// Each term's BM25F pseudo-frequency in this tool: its count in each field, weighted
    /// and normalised by the field's length against the average length of that field.
    pub(super) fn pseudo_frequencies(
        &self,
        averages: &[f32; FIELDS],
    ) -> impl Iterator<Item = (u32, f32)> + '_ {
        let mut norm = [1f32; FIELDS];
        for f in 0..FIELDS {
            if averages[f] > 0.0 {
                norm[f] = 1.0 - NORMS[f] + NORMS[f] * self.lengths[f] as f32 / averages[f];
            }
        }
        self.counts.iter().map(move |(term, counts)| {
            let tf = (0..FIELDS)
                .map(|f| WEIGHTS[f] * f32::from(counts[f]) / norm[f])
                .sum();
            (*term, tf)
        })
    }
}

/// Each field's average length over `docs`.
pub(super) fn averages(docs: &[Fielded]) -> [f32; FIELDS] {
    let mut sums = [0f64; FIELDS];
    for d in docs {
        for (sum, len) in sums.iter_mut().zip(d.lengths) {
            *sum += f64::from(len);
        }
    }
    let n = docs.len().max(1) as f64;
    sums.map(|s| (s / n) as f32)
}
