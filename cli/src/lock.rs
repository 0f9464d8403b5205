//! Locks taken whatever became of their last holder: the one place that says why a
//! poisoned lock is recovered, not propagated.
//!
//! A lock here guards bookkeeping (sessions, tasks, rounds, subscriptions) that every update
//! leaves consistent before it could panic; a panic in one caller (a request handler, a
//! progress listener) must not turn every later call into a second panic. So a poisoned lock
//! is taken as it is: `lock.locked()` for `lock.lock().unwrap_or_else(PoisonError::into_inner)`.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`], recovering a poisoned lock (see the module docs).
pub(crate) trait Locked<T: ?Sized> {
    /// The guard, poisoned or not.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`], recovering a poisoned lock.
pub(crate) trait RwLocked<T: ?Sized> {
    /// The read guard, poisoned or not.
    fn read_locked(&self) -> RwLockReadGuard<'_, T>;
    /// The write guard, poisoned or not.
    fn write_locked(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLocked<T> for RwLock<T> {
    fn read_locked(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_locked(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}
