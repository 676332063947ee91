//! Who a session belongs to ([`Owner`]): the issuer, subject and client of the token that
//! created it, or the token itself ([`TokenFingerprint`]) when it names neither.

use super::Principal;

/// The SHA-256 of a token that names neither a subject nor a client: the owner of the
/// sessions it creates, the same on every instance of a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TokenFingerprint(pub(super) [u8; 32]);

/// Who a session belongs to: the issuer, subject and client of the token that created it, or
/// that token alone when it names neither subject nor client (a refreshed token then finds the
/// session unknown, and the client starts another; two anonymous tokens never share one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    issuer: Option<String>,
    subject: Option<String>,
    client_id: Option<String>,
    token: Option<TokenFingerprint>,
}

impl Owner {
    /// The owner of a session created by a request with these extensions.
    pub(crate) fn of(extensions: &http::Extensions) -> Option<Owner> {
        let principal = extensions.get::<Principal>()?;
        Some(Owner {
            issuer: principal.issuer.clone(),
            subject: principal.subject.clone(),
            client_id: principal.client_id.clone(),
            token: extensions.get::<TokenFingerprint>().copied(),
        })
    }

    /// Whether a request with these extensions comes from the owner.
    pub(crate) fn admits(&self, extensions: &http::Extensions) -> bool {
        Owner::of(extensions).is_some_and(|other| other == *self)
    }

    /// The owner as one line, for the record of a session a fleet shares: what every instance
    /// computes alike for the same token.
    pub(crate) fn record(&self) -> String {
        let token = self.token.map(|t| t.0.iter().map(|b| format!("{b:02x}")).collect::<String>());
        serde_json::json!([self.issuer, self.subject, self.client_id, token]).to_string()
    }
}
