//! The client capabilities an input request needs (`sampling`, `sampling.tools`,
//! `elicitation`, `elicitation.form`, `elicitation.url`, `roots`): checked before a request to
//! the client, an input-required round trip or an input request of a task.

use mcp_types::ClientCapabilities;

/// The client capability an input request of kind `capability` (`sampling`, `elicitation`,
/// `roots`) with these params needs and `caps` lacks: what both the input-required round trips
/// and the input requests of a 2026-07-28 task check before asking.
pub(crate) fn input_missing(
    caps: &ClientCapabilities,
    capability: &str,
    params: &serde_json::Value,
) -> Option<&'static str> {
    match capability {
        "sampling" => sampling_missing(caps.sampling.as_ref(), params.get("tools").is_some_and(|t| !t.is_null())),
        "elicitation" => elicitation_missing(
            caps.elicitation.as_ref(),
            params.get("mode").and_then(serde_json::Value::as_str) == Some("url"),
        ),
        "roots" => caps.roots.is_none().then_some("roots"),
        _ => None,
    }
}

/// The client capability a sampling request needs and the client did not declare: `sampling`,
/// or `sampling.tools` for a request that offers tools (2025-11-25: a server MUST NOT send
/// tools without it).
pub(crate) fn sampling_missing(
    sampling: Option<&mcp_types::ClientCapabilitiesSampling>,
    with_tools: bool,
) -> Option<&'static str> {
    match sampling {
        None => Some("sampling"),
        Some(s) if with_tools && s.tools.is_none() => Some("sampling.tools"),
        Some(_) => None,
    }
}

/// The client capability an elicitation needs and the client did not declare: `elicitation`,
/// `elicitation.url` for URL mode, or `elicitation.form` for form mode from a client that
/// declared URL mode only (an empty `elicitation` object means form mode, as it did before
/// modes existed).
pub(crate) fn elicitation_missing(
    elicitation: Option<&mcp_types::ClientCapabilitiesElicitation>,
    url: bool,
) -> Option<&'static str> {
    let Some(e) = elicitation else { return Some("elicitation") };
    if url {
        e.url.is_none().then_some("elicitation.url")
    } else {
        (e.form.is_none() && e.url.is_some()).then_some("elicitation.form")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(v: serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn sub_capabilities_are_checked() {
        let sampling = |v| caps(v).sampling;
        assert_eq!(sampling_missing(None, false), Some("sampling"));
        assert_eq!(sampling_missing(sampling(serde_json::json!({"sampling": {}})).as_ref(), false), None);
        assert_eq!(
            sampling_missing(sampling(serde_json::json!({"sampling": {}})).as_ref(), true),
            Some("sampling.tools")
        );
        assert_eq!(sampling_missing(sampling(serde_json::json!({"sampling": {"tools": {}}})).as_ref(), true), None);
        let elicitation = |v| caps(v).elicitation;
        assert_eq!(elicitation_missing(None, false), Some("elicitation"));
        let empty = elicitation(serde_json::json!({"elicitation": {}}));
        assert_eq!(elicitation_missing(empty.as_ref(), false), None, "empty means form mode");
        assert_eq!(elicitation_missing(empty.as_ref(), true), Some("elicitation.url"));
        let url = elicitation(serde_json::json!({"elicitation": {"url": {}}}));
        assert_eq!(elicitation_missing(url.as_ref(), false), Some("elicitation.form"));
        assert_eq!(elicitation_missing(url.as_ref(), true), None);
        let both = elicitation(serde_json::json!({"elicitation": {"form": {}, "url": {}}}));
        assert_eq!(elicitation_missing(both.as_ref(), false), None);
        let required = |c| mcp_types::ErrorObject::missing_required_client_capability(c).data.unwrap_or_default();
        assert_eq!(required("sampling.tools")["requiredCapabilities"], serde_json::json!({"sampling": {"tools": {}}}));
        assert_eq!(required("roots")["requiredCapabilities"], serde_json::json!({"roots": {}}));
    }
}
