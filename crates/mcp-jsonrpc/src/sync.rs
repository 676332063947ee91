//! Poison-tolerant locking, shared by the crates of this workspace; not part of the API.
//!
//! A thread that panics while it holds a `std::sync` lock poisons the lock. Every lock in this
//! SDK guards data that a panic leaves consistent (maps, lists and flags changed in one step),
//! and handler panics are caught and answered, so the next user takes the data as it is
//! instead of panicking in turn.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`] that goes on after a holder panicked.
pub trait MutexExt<T: ?Sized> {
    /// Locks, taking the data as it is if a holder panicked.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    #[inline]
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`] that go on after a holder panicked.
pub trait RwLockExt<T: ?Sized> {
    /// Locks for reading, taking the data as it is if a writer panicked.
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    /// Locks for writing, taking the data as it is if a writer panicked.
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    #[inline]
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    #[inline]
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_locked_leaves_the_data_usable() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let rw = std::sync::Arc::new(RwLock::new(1));
        let (m2, rw2) = (m.clone(), rw.clone());
        let _ = std::thread::spawn(move || {
            let _m = m2.lock().unwrap();
            let _w = rw2.write().unwrap();
            panic!("poison both");
        })
        .join();
        assert!(m.is_poisoned() && rw.is_poisoned());
        *m.lock_unpoisoned() += 1;
        *rw.write_unpoisoned() += 1;
        assert_eq!((*m.lock_unpoisoned(), *rw.read_unpoisoned()), (2, 2));
    }
}
