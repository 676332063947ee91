//! A session's part in a fleet ([`SharedLink`]): the fleet it belongs to, the owner its record
//! names, when the record is due to be kept alive, whether it exists, and whether the session
//! was found gone from the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::SessionCopy;
use super::fleet::Fleet;

/// A session's part in a fleet: the fleet, the owner to record (feature `auth`), how long
/// the record lives unused.
pub(crate) struct SharedLink {
    pub(crate) fleet: Arc<Fleet>,
    pub(crate) owner: Box<str>,
    pub(crate) ttl: Duration,
    /// Milliseconds since `epoch` of the last touch of the record.
    touched: AtomicU64,
    epoch: Instant,
    /// The record exists in the store (this copy was loaded from it, or made it).
    recorded: AtomicBool,
    /// The store has no record of the session any more (it ended or expired): this copy ends.
    gone: AtomicBool,
    /// The nonce of this copy in the record (see [`SessionCopy`]): another copy of this
    /// instance loaded at once may have written its own, which this one then takes.
    nonce: AtomicU64,
}

impl SharedLink {
    /// The link of a copy (`copy`): of a new session (whose record is still to be made) or of
    /// one loaded from its record (`recorded`).
    pub(crate) fn new(fleet: Arc<Fleet>, owner: Box<str>, ttl: Duration, recorded: bool, copy: SessionCopy) -> Self {
        SharedLink {
            nonce: AtomicU64::new(copy.nonce),
            fleet,
            owner,
            ttl,
            touched: AtomicU64::new(0),
            epoch: Instant::now(),
            recorded: AtomicBool::new(recorded),
            gone: AtomicBool::new(false),
        }
    }

    /// Whether the record is due for a touch (a tenth of its ttl since the last one), counted
    /// as touched if so.
    pub(crate) fn touch_due(&self) -> bool {
        let now = self.epoch.elapsed().as_millis() as u64;
        let every = (self.ttl.as_millis() as u64 / 10).max(1);
        let last = self.touched.load(Ordering::Relaxed);
        now.saturating_sub(last) >= every
            && self.touched.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    /// Counts the record as touched now.
    pub(crate) fn touched(&self) {
        self.touched.store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Whether the record exists (made or loaded by this copy).
    pub(crate) fn recorded(&self) -> bool {
        self.recorded.load(Ordering::Acquire)
    }

    pub(crate) fn set_recorded(&self) {
        self.recorded.store(true, Ordering::Release);
    }

    /// This copy, as the record names it.
    pub(crate) fn copy(&self) -> SessionCopy {
        SessionCopy { tag: self.fleet.tag(), nonce: self.nonce.load(Ordering::Acquire) }
    }

    /// The record names this copy by `copy` now (another copy of this instance, loaded at
    /// once, wrote it and was dropped).
    pub(crate) fn set_copy(&self, copy: SessionCopy) {
        self.nonce.store(copy.nonce, Ordering::Release);
    }

    /// Whether the store was found without the session's record.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// The store has no record of the session: this copy is to end.
    pub(crate) fn set_gone(&self) {
        self.gone.store(true, Ordering::Release);
    }
}
