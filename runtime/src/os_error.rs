// The documentation of this private module is on `toolbind::OsError`.

use std::fmt;
use std::io;
use std::sync::Arc;

/// An operating system's error, kept whole: the [`io::Error`] itself (its
/// [`kind`](io::Error::kind), its `raw_os_error`), shared so that the reports holding one
/// ([`SyncError`](crate::syncing::SyncError), [`SyncOutcome::Failed`](crate::syncing::SyncOutcome::Failed),
/// [`LoadWarningKind::UnreadableDir`](crate::loader::LoadWarningKind::UnreadableDir)) stay `Clone`.
/// Two are equal when their kind and message are.
#[derive(Debug, Clone)]
pub struct OsError(Arc<io::Error>);

impl OsError {
    /// The error itself.
    pub fn io(&self) -> &io::Error {
        &self.0
    }

    /// Its kind: `NotFound`, `PermissionDenied`, `StorageFull`, ...
    pub fn kind(&self) -> io::ErrorKind {
        self.0.kind()
    }
}

impl From<io::Error> for OsError {
    fn from(e: io::Error) -> Self {
        OsError(Arc::new(e))
    }
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for OsError {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for OsError {}

// Transparent: the message is the io::Error's, so the chain goes on with its cause
// (printing the io::Error again as the source would show it twice).
impl std::error::Error for OsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}
