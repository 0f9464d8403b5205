//! Content hashes for the private cache (harness files, transpiled TypeScript); the
//! folders themselves are opened and checked by `crate::dirs`.

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An incremental SHA-256 (the TypeScript transpile cache's keys).
#[cfg(feature = "typescript")]
pub(crate) struct Hasher(Sha256);

#[cfg(feature = "typescript")]
impl Hasher {
    pub(crate) fn new() -> Self {
        Hasher(Sha256::new())
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub(crate) fn hex(self) -> String {
        hex(&self.0.finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
