//! Protocol revisions: [`ProtocolVersion`] names one, [`Revisions`] is a set of them.

use std::fmt;
use std::str::FromStr;

/// One revision of the Model Context Protocol.
///
/// Revisions are ordered by date, so `a < b` means `a` is older. They are parsed from and
/// written as their wire string (`"2025-06-18"`).
///
/// ```
/// use mcp_types::ProtocolVersion;
///
/// let v: ProtocolVersion = "2025-06-18".parse().unwrap();
/// assert_eq!(v, ProtocolVersion::V2025_06_18);
/// assert!(v < ProtocolVersion::LATEST);
/// assert_eq!(v.to_string(), "2025-06-18");
/// assert!(ProtocolVersion::V2026_07_28.is_stateless());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: the first public revision.
    V2024_11_05 = 0,
    /// `2025-03-26`: audio content, tool annotations, JSON-RPC batches, Streamable HTTP.
    V2025_03_26 = 1,
    /// `2025-06-18`: structured tool output, elicitation, resource links, titles; no batches.
    V2025_06_18 = 2,
    /// `2025-11-25`: icons, tasks, sampling with tools, URL elicitation, JSON Schema 2020-12.
    V2025_11_25 = 3,
    /// `2026-07-28`: stateless; no `initialize` handshake and no sessions.
    V2026_07_28 = 4,
}

impl ProtocolVersion {
    /// Every supported revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest supported revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest revision that still has the `initialize` handshake and sessions.
    pub const LATEST_SESSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision assumed when a Streamable HTTP request carries no `MCP-Protocol-Version`
    /// header (as the 2025-06-18 transport specification says).
    pub const HTTP_DEFAULT: ProtocolVersion = ProtocolVersion::V2025_03_26;

    /// The wire string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for a revision this crate does not know.
    pub fn from_wire(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this revision is the stateless one (no handshake, no sessions).
    pub const fn is_stateless(self) -> bool {
        matches!(self, ProtocolVersion::V2026_07_28)
    }

    /// Whether this revision accepts JSON-RPC batches (only 2025-03-26 does).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// The set holding just this revision.
    pub const fn only(self) -> Revisions {
        Revisions(1 << self as u8)
    }

    /// This revision and every newer one.
    pub const fn and_newer(self) -> Revisions {
        Revisions(Revisions::ALL.0 & !((1u8 << self as u8) - 1))
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a revision this crate does not support.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported protocol version `{0}`")]
pub struct UnsupportedVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnsupportedVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::from_wire(s).ok_or_else(|| UnsupportedVersion(s.to_owned()))
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A set of protocol revisions, as a bit mask.
///
/// The code generator records for every type and every field the revisions whose schema has
/// it; serialization for a revision ([`crate::ForRevision`]) writes a field only when its set
/// contains that revision.
///
/// ```
/// use mcp_types::{ProtocolVersion as V, Revisions};
///
/// let since = V::V2025_06_18.and_newer();
/// assert!(since.contains(V::V2026_07_28));
/// assert!(!since.contains(V::V2025_03_26));
/// assert_eq!(since.oldest(), Some(V::V2025_06_18));
/// assert!(Revisions::ALL.contains(V::V2024_11_05));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Revisions(u8);

impl Revisions {
    /// Every supported revision.
    pub const ALL: Revisions = Revisions(0b1_1111);
    /// No revision.
    pub const NONE: Revisions = Revisions(0);

    /// Builds a set from its bit mask (bit `n` is the `n`-th revision of [`ProtocolVersion::ALL`]).
    pub const fn from_bits(bits: u8) -> Revisions {
        Revisions(bits & Revisions::ALL.0)
    }

    /// The bit mask.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether the set holds `v`.
    #[inline]
    pub const fn contains(self, v: ProtocolVersion) -> bool {
        self.0 & (1 << v as u8) != 0
    }

    /// Whether the two sets share a revision.
    #[inline]
    pub const fn intersects(self, other: Revisions) -> bool {
        self.0 & other.0 != 0
    }

    /// The union of two sets.
    pub const fn union(self, other: Revisions) -> Revisions {
        Revisions(self.0 | other.0)
    }

    /// The revisions in the set, oldest first.
    pub fn iter(self) -> impl Iterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().filter(move |v| self.contains(*v))
    }

    /// The oldest revision in the set.
    pub fn oldest(self) -> Option<ProtocolVersion> {
        self.iter().next()
    }

    /// The newest revision in the set.
    pub fn newest(self) -> Option<ProtocolVersion> {
        self.iter().last()
    }
}

impl From<ProtocolVersion> for Revisions {
    fn from(v: ProtocolVersion) -> Revisions {
        v.only()
    }
}

impl fmt::Debug for Revisions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(|v| v.as_str())).finish()
    }
}
