//! Whose tasks are whose: the owner a task is stored under, so that nobody else reaches it
//! (the specification's binding of tasks to the requestor's context). A task of revision
//! 2025-11-25 belongs to the HTTP principal, else the HTTP session, else the connection
//! ([`session_owner`]); a task of the 2026-07-28 extension to the HTTP principal, else to every
//! client ([`extension_owner`]).

use mcp_jsonrpc::RequestContext;

use super::call::Call;

/// Who owns the tasks this request creates or reads, so that nobody else reaches them (the
/// specification's binding of tasks to the requestor's context); `None` where nothing binds
/// the request to a client:
/// - the HTTP principal, when the endpoint checks tokens and the token names someone: a client
///   keeps its tasks across sessions and instances;
/// - else over HTTP the session, by its `Mcp-Session-Id`, which every instance of a fleet
///   knows it by (a copy of the session elsewhere is the same owner); a POST outside any
///   session (a stateless endpoint) has no owner: the next POST may be anyone's;
/// - else the connection (stdio, in memory: one client at its end), by a random id of the
///   process and the connection's number in it, so that servers sharing a store never mix
///   their connections' tasks.
pub(crate) fn session_owner(call: &Call<'_>) -> Option<String> {
    if let Some(principal) = principal_owner(call.rctx) {
        return Some(principal);
    }
    #[cfg(feature = "http")]
    if let Some(info) = call.rctx.attachment().and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
    {
        return info.session_id().map(|id| format!("http-session:{id}"));
    }
    Some(format!("connection:{}:{}", process_tag(), call.state.id))
}

/// 128 random bits drawn once per process: what tells this process's connections from
/// another's (their numbers start at 1 in every process).
fn process_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(crate::tasks::new_task_id)
}

/// The HTTP principal of a request, as a task owner, when the endpoint checks tokens and the
/// token names someone (see [`crate::context::principal_key`]).
pub(crate) fn principal_owner(rctx: &RequestContext) -> Option<String> {
    crate::context::principal_key(rctx.attachment())
}

/// The owner of extension tasks when the endpoint names no principal: the store is
/// server-global (a client polls a task from any connection, which the revision's statelessness
/// asks for; its id, 128 random bits returned only to its creator, is the capability to it, as
/// the extension's security considerations allow).
const SHARED_OWNER: &str = "ext";

/// Who owns the extension tasks a request creates or reads: the HTTP principal, else every
/// client ([`SHARED_OWNER`]).
pub(crate) fn extension_owner(rctx: &RequestContext) -> String {
    principal_owner(rctx).unwrap_or_else(|| SHARED_OWNER.to_owned())
}
