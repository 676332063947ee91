//! `_meta` on request and notification params in every revision.
//!
//! The schemas of 2024-11-05 to 2025-06-18 declare `_meta` (and its `progressToken`) on the
//! base `Request.params` / `Notification.params` only; the concrete params of `tools/call`,
//! `notifications/progress`, ... inherit it. Encoding for those revisions once dropped it, and
//! with it the progress token: a client pinned to 2025-06-18 never got progress.

use mcp_types::{
    CallToolRequest, CallToolRequestParams, ListToolsRequest, NotificationMetaObject, PaginatedRequestParams,
    ParamsMeta, ProgressNotification, ProgressNotificationParams, ProgressToken, ProtocolVersion, to_value_for,
};
use serde_json::json;

#[test]
fn call_tool_params_keep_the_progress_token_in_2025_06_18() {
    let mut params = CallToolRequestParams::new("slow");
    params.set_progress_token(ProgressToken::String("p-1".into()));
    let wire = to_value_for(&params, ProtocolVersion::V2025_06_18).unwrap();
    assert_eq!(wire, json!({"name": "slow", "_meta": {"progressToken": "p-1"}}));

    let back: CallToolRequestParams = serde_json::from_value(wire).unwrap();
    assert_eq!(back.progress_token(), Some(&ProgressToken::String("p-1".into())));
}

#[test]
fn request_params_keep_the_progress_token_in_every_revision() {
    for rev in ProtocolVersion::ALL {
        let mut call = CallToolRequestParams::new("slow");
        call.set_progress_token(ProgressToken::Integer(7));
        let wire = to_value_for(&CallToolRequest::new(call), rev).unwrap();
        assert_eq!(wire["params"]["_meta"]["progressToken"], 7, "tools/call @ {rev}: {wire}");

        // Paginated requests: their params redeclare only `cursor` in the older schemas.
        let mut list = PaginatedRequestParams::default();
        list.set_progress_token(ProgressToken::Integer(8));
        let request = ListToolsRequest { params: Some(list), ..Default::default() };
        let wire = to_value_for(&request, rev).unwrap();
        assert_eq!(wire["params"]["_meta"]["progressToken"], 8, "tools/list @ {rev}: {wire}");
    }
}

#[test]
fn notification_params_keep_meta_in_every_revision() {
    for rev in ProtocolVersion::ALL {
        let mut params = ProgressNotificationParams::new(1.0, ProgressToken::Integer(7));
        let mut meta = NotificationMetaObject::default();
        meta.extra.insert("example.com/trace".into(), json!("t"));
        params.meta = Some(meta);
        let wire = to_value_for(&ProgressNotification::new(params), rev).unwrap();
        assert_eq!(wire["params"]["_meta"], json!({"example.com/trace": "t"}), "{rev}: {wire}");
        assert_eq!(wire["params"]["progressToken"], 7, "{rev}: {wire}");
    }
}

#[test]
fn elicitation_params_of_both_modes_carry_the_progress_token() {
    use mcp_types::{ElicitRequestFormParams, ElicitRequestFormParamsRequestedSchema, ElicitRequestParams};
    use mcp_types::{ElicitRequestURLParams, RequestMetaObject};

    let form = ElicitRequestFormParams::new(
        "name?",
        ElicitRequestFormParamsRequestedSchema::new(mcp_types::indexmap::IndexMap::new()),
    );
    let url = ElicitRequestURLParams::new("sign in", "https://example.com/login");
    for (i, mut params) in [ElicitRequestParams::ElicitRequestForm(form), ElicitRequestParams::ElicitRequestURL(url)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(params.progress_token(), None);
        params.set_progress_token(ProgressToken::Integer(i as i64));
        assert_eq!(params.progress_token(), Some(&ProgressToken::Integer(i as i64)));
        let wire = serde_json::to_value(&params).unwrap();
        assert_eq!(wire["_meta"]["progressToken"], i, "{wire}");
        let back: ElicitRequestParams = serde_json::from_value(wire).unwrap();
        assert_eq!(back.progress_token(), Some(&ProgressToken::Integer(i as i64)));
        // Other `_meta` members stay.
        let meta = match &params {
            ElicitRequestParams::ElicitRequestForm(p) => &p.meta,
            ElicitRequestParams::ElicitRequestURL(p) => &p.meta,
        };
        assert!(meta.as_ref().is_some_and(|m: &RequestMetaObject| m.extra.is_empty()));
    }
}
