//! The fields of an elicitation form keep the order the server sent them in, through decoding
//! (the form-or-URL union, and the tagged unions around it) and encoding, in every revision
//! that has elicitation.

use mcp_types::{ElicitRequestParams, InputRequest, ProtocolVersion, to_string_for};

const FIELDS: [&str; 4] = ["zeta", "alpha", "mu", "é \"quoted\""];

/// A form whose fields are not in alphabetical order, with nested arrays and escapes.
fn form_json(mode: bool) -> String {
    let mode = if mode { r#""mode": "form","# } else { "" };
    format!(
        r#"{{{mode} "message": "Order?", "requestedSchema": {{"type": "object", "properties": {{
            "zeta": {{"type": "string", "enum": ["b", "a"], "enumNames": ["B", "A"]}},
            "alpha": {{"type": "integer", "minimum": -1.5e3, "default": 2}},
            "mu": {{"type": "boolean", "default": true, "description": "line\nbreak"}},
            "é \"quoted\"": {{"type": "string", "format": "email", "title": "{{\"odd\": [1]}}"}}
        }}, "required": ["mu", "zeta"]}}}}"#
    )
}

fn names(params: &ElicitRequestParams) -> Vec<&str> {
    let ElicitRequestParams::ElicitRequestForm(form) = params else { panic!("not a form: {params:?}") };
    form.requested_schema.properties.keys().map(String::as_str).collect()
}

#[test]
fn a_form_decoded_from_text_keeps_the_servers_order() {
    // 2025-06-18 sends no `mode`; 2025-11-25 and later say `form`.
    for mode in [false, true] {
        let params: ElicitRequestParams = serde_json::from_str(&form_json(mode)).unwrap();
        assert_eq!(names(&params), FIELDS);
        let ElicitRequestParams::ElicitRequestForm(form) = &params else { unreachable!() };
        let zeta = serde_json::to_value(&form.requested_schema.properties["zeta"]).unwrap();
        assert_eq!(zeta["enum"], serde_json::json!(["b", "a"]), "{zeta}");
        assert_eq!(form.requested_schema.required.as_deref(), Some(&["mu".to_owned(), "zeta".to_owned()][..]));
    }
}

#[test]
fn a_form_inside_a_tagged_request_keeps_the_order() {
    // 2026-07-28's input requests are tagged by method: serde buffers them on its own.
    let request = format!(r#"{{"method": "elicitation/create", "params": {}}}"#, form_json(true));
    let InputRequest::Elicit(elicit) = serde_json::from_str::<InputRequest>(&request).unwrap() else {
        panic!("not an elicitation")
    };
    assert_eq!(names(&elicit.params), FIELDS);
}

#[test]
fn a_form_is_encoded_in_its_order_for_each_revision() {
    let params: ElicitRequestParams = serde_json::from_str(&form_json(true)).unwrap();
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let text = to_string_for(&params, version).unwrap();
        let at: Vec<usize> = ["\"zeta\":", "\"alpha\":", "\"mu\":", r#""é \"quoted\"":"#]
            .iter()
            .map(|key| text.find(key).unwrap_or_else(|| panic!("{key} not in {text}")))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{version}: out of order: {text}");
        // And what was encoded decodes to the same form.
        let again: ElicitRequestParams = serde_json::from_str(&text).unwrap();
        assert_eq!(names(&again), FIELDS);
    }
}

#[test]
fn values_that_are_not_json_text_are_refused_not_mangled() {
    // A `Value` holds no order to keep (its members are sorted): it still decodes.
    let value: serde_json::Value = serde_json::from_str(&form_json(true)).unwrap();
    let params: ElicitRequestParams = serde_json::from_value(value).unwrap();
    assert_eq!(names(&params), ["alpha", "mu", "zeta", "é \"quoted\""]);
    // Neither a form nor a URL.
    let err = serde_json::from_str::<ElicitRequestParams>(r#"{"message": 1}"#).unwrap_err();
    assert!(err.to_string().contains("did not match any variant"), "{err}");
    assert!(serde_json::from_str::<ElicitRequestParams>("[1, 2").is_err());
}
