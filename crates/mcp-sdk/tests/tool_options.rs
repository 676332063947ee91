//! `#[tool]` options that map to `ToolDef`'s task and elicitation settings: `deferred_task`
//! and `elicits(..)`, through the test client.
#![cfg(all(feature = "testing", feature = "macros"))]

use mcp_sdk::client::tasks::ToolTask;
use mcp_sdk::server::{Context, Elicitation, ToolError};
use mcp_sdk::{testing, tool};
use serde_json::json;

/// A task from the start, for a client that declares the tasks extension.
#[tool(task = "optional")]
async fn eager() -> &'static str {
    "done"
}

/// Runs synchronously until it awaits `run_as_task`, which this one never does.
#[tool(task = "optional", deferred_task)]
async fn deferred(ctx: Context) -> &'static str {
    let _ = ctx;
    "done"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nested {
    inner: Confirm,
}

/// Asks for a confirmation.
#[tool(elicits(Confirm))]
async fn confirm(ctx: Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Confirm>("Sure?").await? {
        Elicitation::Accepted(c) => format!("ok: {}", c.ok),
        _ => "no".to_owned(),
    })
}

/// Elicits a form no revision can express.
#[tool(elicits(Confirm, Nested))]
async fn nested(ctx: Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Nested>("Nested?").await? {
        Elicitation::Accepted(n) => n.inner.ok.to_string(),
        _ => String::new(),
    })
}

#[tokio::test]
async fn deferred_task_answers_synchronously_until_run_as_task() {
    let server = mcp_sdk::server::Server::builder("s", "1").tool(eager::tool()).tool(deferred::tool()).build().unwrap();
    let client = testing::connect(&server).await.unwrap();
    assert!(client.protocol_version().is_stateless());
    let eager = client.call_tool_as_task("eager", json!({}), None).await.unwrap();
    assert!(matches!(eager, ToolTask::Running(_)), "{eager:?}");
    let deferred = client.call_tool_as_task("deferred", json!({}), None).await.unwrap();
    match deferred {
        ToolTask::Done(result) => assert_eq!(result.content[0].as_text(), Some("done")),
        other => panic!("a deferred task that never began is answered at once: {other:?}"),
    }
}

#[test]
fn elicits_checks_the_forms_when_the_tool_is_defined() {
    assert_eq!(confirm::tool().definition().name, "confirm");
    let panic = std::panic::catch_unwind(nested::tool).expect_err("a nested form is refused at definition");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("nested") && message.contains("field `inner`"), "{message}");
}

#[tokio::test]
async fn a_tool_that_elicits_still_asks_at_call_time() {
    let server = mcp_sdk::server::Server::builder("s", "1").tool(confirm::tool()).build().unwrap();
    let client = testing::client()
        .on_elicitation(|_| {
            let mut answer = mcp_sdk::types::ElicitResult::new(mcp_sdk::types::ElicitAction::Accept);
            answer.content = Some([("ok".to_owned(), mcp_sdk::types::ElicitResultContentValue::Boolean(true))].into());
            Ok(answer)
        })
        .connect(&server)
        .await
        .unwrap();
    let result = client.call_tool("confirm", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("ok: true"));
}

/// An order.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Order {
    /// What to order.
    item: String,
    /// How many.
    quantity: u32,
    /// A note for the shop.
    note: Option<String>,
}

/// Places an order: its fields are the arguments.
#[tool]
fn place_order(#[serde(flatten)] order: Order) -> String {
    format!("{} x {}{}", order.quantity, order.item, order.note.map(|n| format!(" ({n})")).unwrap_or_default())
}

/// Places an order given as one argument, `order`.
#[tool]
fn place_nested(order: Order) -> String {
    format!("{} x {}", order.quantity, order.item)
}

/// Ships an order: its fields and `express` are the arguments; the context is no argument.
#[tool]
async fn ship(express: bool, #[serde(flatten)] order: Order, ctx: Context) -> String {
    let _ = ctx;
    format!("{} x {}, express: {express}", order.quantity, order.item)
}

/// A number cannot give fields.
#[tool]
fn flat_number(#[serde(flatten)] n: i64) -> i64 {
    n
}

#[tokio::test]
async fn a_flattened_struct_gives_its_fields_as_the_arguments() {
    let server = mcp_sdk::server::Server::builder("s", "1")
        .tools([place_order::tool(), place_nested::tool(), ship::tool()])
        .build()
        .unwrap();
    let client = testing::connect(&server).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let schema =
        |name: &str| serde_json::to_value(&tools.iter().find(|t| t.name == name).unwrap().input_schema).unwrap();
    let flat = schema("place_order");
    assert_eq!(flat["type"], "object");
    let properties: Vec<&String> = flat["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["item", "note", "quantity"], "{flat}");
    assert_eq!(flat["properties"]["item"], json!({"type": "string", "description": "What to order."}), "{flat}");
    assert_eq!(flat["required"], json!(["item", "quantity"]), "{flat}");
    // The per-parameter form: one argument named after the parameter.
    let nested = schema("place_nested");
    assert_eq!(nested["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["order"], "{nested}");
    assert_eq!(nested["properties"]["order"]["properties"]["item"]["type"], "string", "{nested}");
    // Mixed with another argument and a context parameter.
    let mixed = schema("ship");
    assert_eq!(mixed["required"], json!(["express", "item", "quantity"]), "{mixed}");

    let placed = client.call_tool("place_order", json!({"item": "tea", "quantity": 2, "note": "green"})).await.unwrap();
    assert_eq!(placed.content[0].as_text(), Some("2 x tea (green)"), "{placed:?}");
    let placed = client.call_tool("place_nested", json!({"order": {"item": "tea", "quantity": 2}})).await.unwrap();
    assert_eq!(placed.content[0].as_text(), Some("2 x tea"), "{placed:?}");
    let shipped = client.call_tool("ship", json!({"item": "tea", "quantity": 2.0, "express": true})).await.unwrap();
    assert_eq!(shipped.content[0].as_text(), Some("2 x tea, express: true"), "{shipped:?}");
    // Bad arguments are a tool error the model can act on, naming what is wrong.
    let bad = client.call_tool("place_order", json!({"item": "tea", "quantity": "two"})).await.unwrap();
    assert!(bad.is_error(), "{bad:?}");
    let text = bad.content[0].as_text().unwrap();
    assert!(text.contains("quantity") && text.contains("integer"), "{text}");
    let missing = client.call_tool("place_order", json!({"quantity": 1})).await.unwrap();
    assert!(missing.is_error() && missing.content[0].as_text().unwrap().contains("item"), "{missing:?}");
}

#[test]
fn a_flattened_parameter_that_is_no_struct_is_refused_when_the_tool_is_defined() {
    let panic = std::panic::catch_unwind(flat_number::tool).expect_err("refused");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("`n` must be a struct with named fields"), "{message}");
}
