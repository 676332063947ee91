//! Helpers for the HTTP requests the client side makes: the transport's, the OAuth client's,
//! and the token verifiers' of the server side (with features `auth` and `client`).

use bytes::{Bytes, BytesMut};

/// Reads a response body of at most `limit` bytes: `None` when it is larger (reading stops
/// there).
pub(crate) async fn read_bounded(response: &mut reqwest::Response, limit: usize) -> reqwest::Result<Option<Bytes>> {
    let mut buf = BytesMut::new();
    while let Some(chunk) = response.chunk().await? {
        if buf.len() + chunk.len() > limit {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Some(buf.freeze()))
}

/// `client_secret_basic` (RFC 6749 §2.3.1): the client id and secret, each form-urlencoded,
/// as HTTP Basic credentials.
#[cfg(any(feature = "oauth", feature = "auth"))]
pub(crate) fn client_secret_basic(
    request: reqwest::RequestBuilder,
    client_id: &str,
    client_secret: &str,
) -> reqwest::RequestBuilder {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    request.basic_auth(encode(client_id), Some(encode(client_secret)))
}
