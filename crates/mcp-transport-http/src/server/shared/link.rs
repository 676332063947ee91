//! A session's part in a fleet ([`SharedLink`]): the fleet it belongs to, the owner its record
//! names, and when the record is due to be kept alive.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
}

impl SharedLink {
    pub(crate) fn new(fleet: Arc<Fleet>, owner: Box<str>, ttl: Duration) -> Self {
        SharedLink { fleet, owner, ttl, touched: AtomicU64::new(0), epoch: Instant::now() }
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
}
