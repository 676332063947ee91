//! The sealed `requestState` of the 2026-07-28 input-required round trips (`mcp-server`).

use mcp_server::fuzzing::StateSealer;
use serde_json::Value;

const KEY: &[u8] = b"the key of the fuzz target, 32 b";
const OTHER: &[u8] = b"another key, which sealed nothing";

/// The first byte picks what to try:
/// - even: the rest, as text, is a token presented to the server: it never opens (nobody
///   knows the key);
/// - odd: the rest (JSON, or else a string of it) is a payload, sealed with the key: the token
///   opens to the payload, with the key alone or among others (rotation), never with another
///   key; the token changed at the position and to the character the second and third bytes
///   pick, or cut short at the second byte, never opens.
pub fn state(data: &[u8]) {
    let sealer = StateSealer::new(vec![KEY.to_vec()]);
    let [mode, rest @ ..] = data else { return };
    if mode % 2 == 0 {
        let token = String::from_utf8_lossy(rest);
        assert!(sealer.open(&token).is_none(), "a token nobody sealed opened: {token:?}");
        return;
    }
    let [pos, with, payload @ ..] = rest else { return };
    let payload: Value = serde_json::from_slice(payload)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()));
    let token = sealer.seal(&payload);
    // The payload travels as JSON text: compare with what that text reads back as.
    let expected: Value = serde_json::from_str(&payload.to_string()).expect("serde_json reads what it writes");
    assert_eq!(sealer.open(&token), Some(expected.clone()));
    let rotated = StateSealer::new(vec![OTHER.to_vec(), KEY.to_vec()]);
    assert_eq!(rotated.open(&token), Some(expected));
    assert!(StateSealer::new(vec![OTHER.to_vec()]).open(&token).is_none(), "opened with another key");

    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/v1";
    let mut tampered = token.clone().into_bytes();
    let at = usize::from(*pos) * tampered.len() / 256;
    tampered[at] = ALPHABET[usize::from(*with) % ALPHABET.len()];
    let tampered = String::from_utf8(tampered).expect("ASCII");
    if tampered != token {
        assert!(sealer.open(&tampered).is_none(), "a tampered token opened: {tampered} (sealed {token})");
    }
    let short = &token[..at];
    assert!(sealer.open(short).is_none(), "a token cut short opened: {short}");
    let longer = format!("{token}{}", char::from(ALPHABET[usize::from(*with) % ALPHABET.len()]));
    assert!(sealer.open(&longer).is_none(), "a token with a character more opened: {longer}");
}
