//! Binary blocks of one call's result, bounded apart from its text.
//!
//! A harness sends a long base64 string (an image's or audio's `data`, a resource's
//! `blob`) ahead of its result as `data` pieces, and the result names it by reference
//! (`protocol/`). Here the pieces are kept in memory while the call's binary data fits
//! [`ExecConfig::max_binary_bytes`](super::ExecConfig::max_binary_bytes); a block that
//! would go past it is decoded into a file in the spill folder as the pieces arrive, so
//! memory holds one piece of it at a time, and the block becomes a `resource_link` to the
//! file. Without a spill folder such a block is refused with a message.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::Malformed;
use crate::spill::BinarySpill;
use crate::spill::MAX_SPILL_DIR_BYTES;

/// The most binary blocks one result may send in pieces; more are refused.
const MAX_BLOBS: usize = 1024;

/// Where a call's binary blocks go, and its bound.
pub(crate) struct Binary<'a> {
    /// The spill folder; `None`: a block over the bound is refused.
    pub dir: Option<&'a Path>,
    pub tool: &'a str,
    pub tool_call_id: &'a str,
    /// Base64 bytes of binary data the result may hold in memory.
    pub bound: usize,
    pub blobs: Blobs,
}

impl Binary<'_> {
    /// No bound and no spill folder: progress updates (bounded by the line limit) and
    /// tests.
    pub(crate) fn unbounded() -> Binary<'static> {
        Binary {
            dir: None,
            tool: "",
            tool_call_id: "",
            bound: usize::MAX,
            blobs: Blobs::default(),
        }
    }
}

/// The pieces received for one call, by reference number.
#[derive(Default)]
pub(crate) struct Blobs {
    /// Base64 bytes held in memory across the call's blocks.
    kept: usize,
    /// Decoded bytes written to spill files for the call.
    spilled: u64,
    items: HashMap<u64, Blob>,
}

pub(crate) enum Blob {
    Memory(String),
    Spill(BinarySpill),
    /// Why the block cannot be kept: completes "an image whose `data` …".
    Refused(String),
}

/// What a binary block becomes.
pub(crate) enum Kept {
    /// Held in memory: the base64 text, as the tool wrote it.
    Memory(String),
    /// Saved to the spill folder: its path, decoded size, and the MIME type a `data:`
    /// prefix named.
    Spilled {
        path: PathBuf,
        bytes: u64,
        prefix_mime: Option<String>,
    },
}

fn over_bound(bound: usize) -> String {
    format!(
        "is over the {bound}-byte bound for binary data a result holds (ExecConfig::max_binary_bytes), and no spill folder is set to save it to (ExecConfig::spill_dir)"
    )
}

fn over_spill() -> String {
    format!(
        "is over {} MiB, more than the spill folder keeps for a call; a tool should write data this large to a file and return a resource_link to it",
        MAX_SPILL_DIR_BYTES >> 20
    )
}

impl Binary<'_> {
    /// One piece of block `r`, in order; `size`, on the first, is the whole block's
    /// length as the harness announced it. A block announced too large for the bound is
    /// saved from its first byte; one that fits is held without regrowing (a harness that
    /// sends more than it announced is bounded all the same).
    pub(crate) fn piece(&mut self, r: u64, data: &str, size: Option<u64>) {
        if !self.blobs.items.contains_key(&r) {
            if self.blobs.items.len() >= MAX_BLOBS {
                return;
            }
            let announced = size.and_then(|s| usize::try_from(s).ok());
            let blob = match announced {
                Some(n) if self.blobs.kept.saturating_add(n) > self.bound => self.spill_file(r),
                // Reserved, not yet counted: a piece counts once it arrives.
                Some(n) => Blob::Memory(String::with_capacity(n.min(self.bound))),
                None => Blob::Memory(String::new()),
            };
            self.blobs.items.insert(r, blob);
        }
        let blobs = &mut self.blobs;
        let Some(blob) = blobs.items.get_mut(&r) else {
            return;
        };
        match blob {
            Blob::Memory(s) => {
                if blobs.kept.saturating_add(data.len()) <= self.bound {
                    s.push_str(data);
                    blobs.kept += data.len();
                    return;
                }
                let held = std::mem::take(s);
                blobs.kept -= held.len();
                *blob = spill_file(self.dir, self.tool, self.tool_call_id, self.bound, r);
                if let Blob::Spill(w) = blob {
                    let before = w.bytes;
                    let written = w.write(&held).and_then(|()| w.write(data));
                    blobs.spilled += w.bytes - before;
                    if let Err(e) = written {
                        *blob = Blob::Refused(e);
                    } else if blobs.spilled > MAX_SPILL_DIR_BYTES {
                        *blob = Blob::Refused(over_spill());
                    }
                }
            }
            Blob::Spill(w) => {
                let before = w.bytes;
                let written = w.write(data);
                blobs.spilled += w.bytes - before;
                if let Err(e) = written {
                    *blob = Blob::Refused(e);
                } else if blobs.spilled > MAX_SPILL_DIR_BYTES {
                    *blob = Blob::Refused(over_spill());
                }
            }
            Blob::Refused(_) => {}
        }
    }

    fn spill_file(&self, r: u64) -> Blob {
        spill_file(self.dir, self.tool, self.tool_call_id, self.bound, r)
    }

    /// Block `r`, sent ahead in pieces, once the result that names it has arrived;
    /// `mime` is the block's declared MIME type (for the spill file's extension).
    pub(crate) fn take(&mut self, r: u64, mime: Option<&str>) -> Result<Kept, Malformed> {
        match self.blobs.items.remove(&r) {
            Some(Blob::Memory(s)) => Ok(Kept::Memory(s)),
            Some(Blob::Spill(w)) => {
                let bytes = w.bytes;
                w.finish(mime)
                    .map(|(path, prefix_mime)| Kept::Spilled {
                        bytes: bytes_after(&path, bytes),
                        path,
                        prefix_mime,
                    })
                    .map_err(Malformed)
            }
            Some(Blob::Refused(why)) => Err(Malformed(why)),
            None if self.blobs.items.len() >= MAX_BLOBS => Err(Malformed(format!(
                "was not kept: the result sent more than {MAX_BLOBS} blocks in pieces"
            ))),
            None => Err(Malformed(format!(
                "names data piece {r}, which the harness did not send"
            ))),
        }
    }

    /// A block's base64 text that came inside the result: kept in memory while the call's
    /// binary data fits the bound, else saved to the spill folder whole.
    pub(crate) fn inline(&mut self, text: String, mime: Option<&str>) -> Result<Kept, Malformed> {
        if self.blobs.kept.saturating_add(text.len()) <= self.bound {
            self.blobs.kept += text.len();
            return Ok(Kept::Memory(text));
        }
        let Some(dir) = self.dir else {
            return Err(Malformed(over_bound(self.bound)));
        };
        let mut w = BinarySpill::create(dir, self.tool, self.tool_call_id, "i")
            .map_err(|e| format!("could not be saved to the spill folder: {e}"))?;
        w.write(&text)?;
        drop(text);
        self.blobs.spilled += w.bytes;
        if self.blobs.spilled > MAX_SPILL_DIR_BYTES {
            return Err(Malformed(over_spill()));
        }
        let bytes = w.bytes;
        let (path, prefix_mime) = w.finish(mime)?;
        Ok(Kept::Spilled {
            bytes: bytes_after(&path, bytes),
            path,
            prefix_mime,
        })
    }
}

/// A new spill file for block `r`, or why there is none.
fn spill_file(dir: Option<&Path>, tool: &str, tool_call_id: &str, bound: usize, r: u64) -> Blob {
    match dir {
        None => Blob::Refused(over_bound(bound)),
        Some(dir) => match BinarySpill::create(dir, tool, tool_call_id, &format!("b{r}")) {
            Ok(w) => Blob::Spill(w),
            Err(e) => Blob::Refused(format!("could not be saved to the spill folder: {e}")),
        },
    }
}

/// The decoded size: what was written before `finish`, plus its last bytes.
fn bytes_after(path: &Path, fallback: u64) -> u64 {
    std::fs::metadata(path).map_or(fallback, |m| m.len())
}
