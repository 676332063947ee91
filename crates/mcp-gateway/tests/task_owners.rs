//! Tasks made through a gateway belong to the principal that made them, as a server's own
//! tasks do: at 2026-07-28 the gateway reaches a mounted server over connections of its own,
//! so the mounted server sees one client for every principal, and the gateway itself must
//! keep each task to its maker. Another principal who learns a task's id (a log, a shared
//! screen) gets "unknown task" for each task method, as for an id that does not exist.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_client::ClientError;
use mcp_client::http::HttpClientConfig;
use mcp_client::tasks::ToolTask;
use mcp_server::{Context, Server, TaskSupport, ToolDef, ToolError};
use mcp_transport_http::server::auth::{AuthConfig, Principal, TokenError, TokenVerifier};
use mcp_transport_http::server::{HttpServerConfig, serve_listener};
use mcp_types::{CallToolResult, ContentBlock, ProtocolVersion, TaskStatus};
use serde_json::json;
use tokio::sync::Semaphore;

/// `alice` and `bob`, each their own principal; any other token is refused.
struct Tokens {
    resource: String,
}

impl TokenVerifier for Tokens {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(async move {
            if !matches!(token, "alice" | "bob") {
                return Err(TokenError::Invalid("unknown token".into()));
            }
            Ok(Principal {
                issuer: Some("https://issuer.example".to_owned()),
                subject: Some(token.to_owned()),
                audience: vec![self.resource.clone()],
                ..Principal::default()
            })
        })
    }
}

/// A server whose tool `slow` (runnable as a task) answers "done" once `release` has a permit.
fn slow_server(release: &Arc<Semaphore>) -> Server {
    let release = release.clone();
    let tool = ToolDef::new("slow", json!({"type": "object"}), move |_args, _ctx: Context| {
        let release = release.clone();
        async move {
            release.acquire().await.unwrap().forget();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    Server::builder("local", "1.0").tool(tool).build().unwrap()
}

/// A client of the gateway at `url` with the bearer token `token`, at `version`.
async fn client(url: &str, token: &str, version: ProtocolVersion) -> mcp_client::Client {
    let config = HttpClientConfig::parse(url).unwrap().header(
        mcp_client::http::HeaderName::from_static("authorization"),
        mcp_client::http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    mcp_client::ClientBuilder::new("test", "1").protocol_version(version).connect_http_with(config).await.unwrap()
}

fn assert_unknown<T: std::fmt::Debug>(result: Result<T, ClientError>, why: &str) {
    match result {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602, "{why}: {e:?}"),
        other => panic!("{why}: {other:?}"),
    }
}

async fn tasks_stay_with_their_maker(version: ProtocolVersion) {
    let release = Arc::new(Semaphore::new(0));
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0")
        .mount("local", mcp_gateway::Source::local(slow_server(&release)))
        .build()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let auth = AuthConfig::new(&url, Tokens { resource: url.clone() }).unwrap();
    let config = HttpServerConfig::default().auth(auth);
    tokio::spawn(serve_listener(Arc::new(gateway), config, listener));
    let alice = client(&url, "alice", version).await;
    let bob = client(&url, "bob", version).await;

    let task = match alice.call_tool_as_task("local_slow", json!({}), None).await.unwrap() {
        ToolTask::Running(task) => task,
        other => panic!("not a task: {other:?}"),
    };
    assert_eq!(alice.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working);
    // Bob, with Alice's task id: unknown to him, for every task method.
    assert_unknown(bob.get_task(&task.task_id).await, "bob's tasks/get");
    assert_unknown(bob.cancel_task(&task.task_id).await, "bob's tasks/cancel");
    assert_eq!(alice.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working, "bob cancelled it");
    if !version.is_stateless() {
        let listed = bob.list_tasks(None).await.unwrap();
        assert!(listed.tasks.iter().all(|t| t.task_id != task.task_id), "bob lists alice's task: {listed:?}");
    }
    // Alice's result is hers.
    release.add_permits(1);
    assert_eq!(alice.wait_for_task(&task.task_id).await.unwrap().content[0].as_text(), Some("done"));
    assert_unknown(bob.get_task(&task.task_id).await, "bob's tasks/get once it is done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_through_the_gateway_is_unknown_to_another_principal_in_a_session() {
    tasks_stay_with_their_maker(ProtocolVersion::V2025_11_25).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_through_the_gateway_is_unknown_to_another_principal_with_the_extension() {
    tasks_stay_with_their_maker(ProtocolVersion::V2026_07_28).await;
}
