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

    /// The owner a record names ([`record`](Self::record) read back); `None` for a session
    /// without one (made by a request without a token).
    pub(crate) fn from_record(line: &str) -> Option<Owner> {
        let (issuer, subject, client_id, token): (Option<String>, Option<String>, Option<String>, Option<String>) =
            serde_json::from_str(line).ok()?;
        let token = match token {
            None => None,
            Some(hex) => {
                let mut bytes = [0u8; 32];
                if hex.len() != 64 {
                    return None;
                }
                for (i, byte) in bytes.iter_mut().enumerate() {
                    *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
                }
                Some(TokenFingerprint(bytes))
            }
        };
        Some(Owner { issuer, subject, client_id, token })
    }

    /// The owner as one line, for the record of a session a fleet shares: what every instance
    /// computes alike for the same token.
    pub(crate) fn record(&self) -> String {
        let token = self.token.map(|t| t.0.iter().map(|b| format!("{b:02x}")).collect::<String>());
        serde_json::json!([self.issuer, self.subject, self.client_id, token]).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy an operator loads is owned by who the record names: the owner read back.
    #[test]
    fn an_owner_is_read_back_from_its_record() {
        let owner = Owner {
            issuer: Some("https://issuer".into()),
            subject: Some("alice".into()),
            client_id: None,
            token: Some(TokenFingerprint([0xab; 32])),
        };
        assert_eq!(Owner::from_record(&owner.record()), Some(owner));
        let anonymous = Owner { issuer: None, subject: None, client_id: None, token: None };
        assert_eq!(Owner::from_record(&anonymous.record()), Some(anonymous));
        assert_eq!(Owner::from_record(""), None, "a session made without a token");
    }
}
