//! The typed calls of [`Client`]: one per method of the protocol, the same in both eras
//! (the differences are in [`Connection`]).

use std::collections::{BTreeMap, HashSet};

use mcp_jsonrpc::CallOptions;

use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CompleteRequest, CompleteRequestParams,
    CompleteRequestParamsArgument, CompleteResult, CompletionReference, DiscoverRequest, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, ListPromptsRequest, ListPromptsResult, ListResourceTemplatesRequest,
    ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult, ListToolsRequest, ListToolsResult,
    LoggingLevel, PaginatedRequestParams, PingRequest, Prompt, ReadResourceRequest, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, RootsListChangedNotification, ServerCapabilities, SetLevelRequest,
    SetLevelRequestParams, SubscribeRequest, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequest,
    UnsubscribeRequestParams,
};

use crate::client::Client;
use crate::connection::Connection;
use crate::error::{ClientError, Violation};
use crate::listen::Subscription;
use crate::trace::Target;
use crate::wire::stateless::page_params;

/// The most pages a `list_all_*` helper follows before it gives up (a server that keeps
/// sending new cursors would otherwise keep it busy forever).
const MAX_PAGES: usize = 10_000;

/// A paginated list method: what it lists, and the capability it needs.
pub(crate) trait Listing: mcp_types::Request<Params = PaginatedRequestParams> {
    /// What the list holds.
    type Item;
    /// The capability, for [`ClientError::NotSupported`].
    const CAPABILITY: &'static str;
    /// Whether the server declared the capability.
    fn declared(caps: &ServerCapabilities) -> bool;
    /// The items of a page and the cursor of the next.
    fn into_items(page: Self::Result) -> (Vec<Self::Item>, Option<String>);
    /// What the client learns from a page (`fresh`: the first page of a listing).
    fn received(_client: &Client, _page: &mut Self::Result, _fresh: bool) {}
}

impl Listing for ListToolsRequest {
    type Item = Tool;
    const CAPABILITY: &'static str = "tools";
    fn declared(caps: &ServerCapabilities) -> bool {
        caps.tools.is_some()
    }
    fn into_items(page: ListToolsResult) -> (Vec<Tool>, Option<String>) {
        (page.tools, page.next_cursor)
    }
    /// A listing from its first page starts what is remembered of the tools afresh: tools the
    /// server dropped are forgotten, and what is kept stays bounded by one listing.
    fn received(client: &Client, page: &mut ListToolsResult, fresh: bool) {
        if let Some(rules) = client.stateless().and_then(|s| s.meta.header_rules.as_ref()) {
            rules.learn(&mut page.tools, fresh);
        }
        client.checks.remember(&page.tools, fresh);
    }
}

impl Listing for ListPromptsRequest {
    type Item = Prompt;
    const CAPABILITY: &'static str = "prompts";
    fn declared(caps: &ServerCapabilities) -> bool {
        caps.prompts.is_some()
    }
    fn into_items(page: ListPromptsResult) -> (Vec<Prompt>, Option<String>) {
        (page.prompts, page.next_cursor)
    }
}

impl Listing for ListResourcesRequest {
    type Item = Resource;
    const CAPABILITY: &'static str = "resources";
    fn declared(caps: &ServerCapabilities) -> bool {
        caps.resources.is_some()
    }
    fn into_items(page: ListResourcesResult) -> (Vec<Resource>, Option<String>) {
        (page.resources, page.next_cursor)
    }
}

impl Listing for ListResourceTemplatesRequest {
    type Item = ResourceTemplate;
    const CAPABILITY: &'static str = "resources";
    fn declared(caps: &ServerCapabilities) -> bool {
        caps.resources.is_some()
    }
    fn into_items(page: ListResourceTemplatesResult) -> (Vec<ResourceTemplate>, Option<String>) {
        (page.resource_templates, page.next_cursor)
    }
}

/// Follows `nextCursor` from page to page and collects every item.
async fn collect_pages<T, F, Fut>(method: &str, mut fetch: F) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    // A server that hands back a cursor it gave before would page forever.
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let (items, next) = fetch(cursor).await?;
        all.extend(items);
        match next {
            Some(c) if !seen.insert(c.clone()) => {
                return Err(ClientError::protocol(method, Violation::RepeatedCursor(c)));
            }
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(ClientError::protocol(method, Violation::EndlessPages(MAX_PAGES)))
}

impl Client {
    /// Fails with [`ClientError::NotSupported`] unless `present`.
    fn need(&self, present: bool, what: &'static str) -> Result<(), ClientError> {
        if present { Ok(()) } else { Err(ClientError::NotSupported(what)) }
    }

    /// One page of a list (from the cache when it is fresh there, in 2026-07-28 with
    /// [`ClientBuilder::cache_lists`](crate::ClientBuilder::cache_lists)).
    async fn list<L: Listing>(&self, cursor: Option<String>) -> Result<L::Result, ClientError> {
        self.need(L::declared(&self.server.capabilities), L::CAPABILITY)?;
        let fresh = cursor.is_none();
        let mut page = match &self.connection {
            Connection::Stateless(s) => {
                let page =
                    |params: PaginatedRequestParams, options| s.list_page::<L>(&self.peer, params.cursor, options);
                self.traced(L::METHOD, Target::None, page_params(cursor), CallOptions::default(), page).await?
            }
            Connection::Session(_) => self.send_request::<L>(page_params(cursor), CallOptions::default()).await?,
        };
        L::received(self, &mut page, fresh);
        Ok(page)
    }

    /// Every item of a list, following `nextCursor` to the end.
    async fn list_all<L: Listing>(&self) -> Result<Vec<L::Item>, ClientError> {
        collect_pages(L::METHOD, |cursor| async move { self.list::<L>(cursor).await.map(L::into_items) }).await
    }

    /// Checks the connection with a `ping` (in 2026-07-28, which has no `ping`, with
    /// `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        match &self.connection {
            Connection::Stateless(_) => {
                self.send_request::<DiscoverRequest>(Default::default(), CallOptions::default()).await?;
            }
            Connection::Session(_) => {
                self.send_request::<PingRequest>(Default::default(), CallOptions::default()).await?;
            }
        }
        Ok(())
    }

    /// One page of the server's tools.
    ///
    /// Over Streamable HTTP in 2026-07-28, a tool whose `x-mcp-header` declarations break the
    /// specification's rules is left out (with a warning in the log), and calling it fails
    /// with [`ClientError::RejectedTool`].
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.list::<ListToolsRequest>(cursor).await
    }

    /// Every tool, following `nextCursor` to the end.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListToolsRequest>().await
    }

    /// Calls a tool with JSON arguments (an object, or `null` for none).
    ///
    /// A tool that fails answers with `isError: true`: that is an `Ok` result here (see
    /// [`CallToolResult::is_error`]); protocol failures are errors.
    pub async fn call_tool(&self, name: &str, arguments: serde_json::Value) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = arguments_object(name, arguments)?;
        self.call_tool_with(params, CallOptions::default()).await
    }

    /// Calls a tool with full params and per-call options (timeout, progress, cancellation).
    ///
    /// In 2026-07-28, the input the server asks for (`input_required`: elicitation, sampling,
    /// roots) is answered by the handlers of the builder and the call sent again, as often as
    /// [`ClientBuilder::max_input_rounds`](crate::ClientBuilder::max_input_rounds) allows; the
    /// caller sees only the final result.
    pub async fn call_tool_with(
        &self,
        params: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.need(self.server.capabilities.tools.is_some(), "tools")?;
        let header_rules = self.stateless().and_then(|s| s.meta.header_rules.as_ref());
        if let Some(reason) = header_rules.and_then(|rules| rules.rejected(&params.name)) {
            return Err(ClientError::RejectedTool { tool: params.name, reason });
        }
        let schemas = self.checks.check_arguments(&params)?;
        let name = params.name.clone();
        let result = self.send_request_about::<CallToolRequest>(params, options, Target::Tool(&name)).await?;
        self.checks.check_result(&name, &schemas, &result)?;
        Ok(result)
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, ClientError> {
        self.list::<ListPromptsRequest>(cursor).await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPromptsRequest>().await
    }

    /// Renders a prompt with its arguments (answering the input a 2026-07-28 server asks for,
    /// as [`Client::call_tool_with`] does).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        self.need(self.server.capabilities.prompts.is_some(), "prompts")?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = (!arguments.is_empty()).then_some(arguments);
        self.send_request_about::<GetPromptRequest>(params, CallOptions::default(), Target::Prompt(name)).await
    }

    /// One page of the server's resources.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, ClientError> {
        self.list::<ListResourcesRequest>(cursor).await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResourcesRequest>().await
    }

    /// One page of the server's resource templates.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list::<ListResourceTemplatesRequest>(cursor).await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplatesRequest>().await
    }

    /// Reads a resource (answering the input a 2026-07-28 server asks for, as
    /// [`Client::call_tool_with`] does).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.need(self.server.capabilities.resources.is_some(), "resources")?;
        let params = ReadResourceRequestParams::new(uri);
        self.send_request_about::<ReadResourceRequest>(params, CallOptions::default(), Target::Resource(uri)).await
    }

    /// Fails with [`ClientError::NotSupported`] unless the server declared resource
    /// subscriptions.
    fn need_subscribe(&self) -> Result<(), ClientError> {
        let declared = self.server.capabilities.resources.as_ref().is_some_and(|r| r.subscribe == Some(true));
        self.need(declared, "resource subscriptions")
    }

    /// Subscribes to changes of a resource ([`ServerEvent::ResourceUpdated`](crate::ServerEvent::ResourceUpdated)).
    ///
    /// In 2026-07-28, which has no `resources/subscribe`, the client keeps one
    /// `subscriptions/listen` subscription for the resources subscribed this way (opened
    /// anew, before the old one is closed, when the set changes); its notifications are
    /// events.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need_subscribe()?;
        match &self.connection {
            Connection::Stateless(s) => s.watch_resource(&self.peer, &self.server.capabilities, uri, true).await,
            Connection::Session(_) => {
                let params = SubscribeRequestParams::new(uri);
                self.send_request_about::<SubscribeRequest>(params, CallOptions::default(), Target::Resource(uri))
                    .await?;
                Ok(())
            }
        }
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need_subscribe()?;
        match &self.connection {
            Connection::Stateless(s) => s.watch_resource(&self.peer, &self.server.capabilities, uri, false).await,
            Connection::Session(_) => {
                let params = UnsubscribeRequestParams::new(uri);
                let target = Target::Resource(uri);
                self.send_request_about::<UnsubscribeRequest>(params, CallOptions::default(), target).await?;
                Ok(())
            }
        }
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) for the notifications `filter`
    /// asks for, and waits (at most the connection's request timeout) for the server's
    /// acknowledgment. Its notifications go to the [`Subscription`], not to
    /// [`Client::events`]. Before 2026-07-28, where change notifications come unsolicited:
    /// [`ClientError::NotInRevision`].
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_types::SubscriptionFilter;
    /// let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    /// let mut subscription = client.listen(filter).await?;
    /// while let Some(event) = subscription.next().await {
    ///     println!("{event:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        match &self.connection {
            Connection::Stateless(s) => s.listen(&self.peer, &filter).await,
            Connection::Session(_) => Err(self.not_in_revision("subscriptions/listen")),
        }
    }

    /// Asks for completions of a prompt argument or a template variable: `argument` names
    /// it and holds what was typed so far.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_types::{CompleteRequestParamsArgument, PromptReference};
    /// let argument = CompleteRequestParamsArgument::new("language", "py");
    /// let done = client.complete(PromptReference::new("review"), argument).await?;
    /// println!("{:?}", done.completion.values);
    /// # Ok(()) }
    /// ```
    pub async fn complete(
        &self,
        reference: impl Into<CompletionReference>,
        argument: CompleteRequestParamsArgument,
    ) -> Result<CompleteResult, ClientError> {
        self.complete_with(CompleteRequestParams::new(argument, reference.into()), CallOptions::default()).await
    }

    /// Asks for completions with full params (the values of the other arguments, already
    /// resolved, in `context`) and per-call options.
    pub async fn complete_with(
        &self,
        params: CompleteRequestParams,
        options: CallOptions,
    ) -> Result<CompleteResult, ClientError> {
        self.need(self.server.capabilities.completions.is_some(), "completions")?;
        self.send_request::<CompleteRequest>(params, options).await
    }

    /// Sets the level of the log messages the server sends.
    ///
    /// In 2026-07-28, which has no `logging/setLevel`, the level goes into the `_meta` of
    /// every later request (`io.modelcontextprotocol/logLevel`): the server sends the log
    /// messages of a request on its response stream, as
    /// [`ServerEvent::Log`](crate::ServerEvent::Log).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.need(self.server.capabilities.logging.is_some(), "logging")?;
        match &self.connection {
            Connection::Stateless(s) => s.meta.set_log_level(level),
            Connection::Session(_) => {
                self.send_request::<SetLevelRequest>(SetLevelRequestParams::new(level), CallOptions::default()).await?;
            }
        }
        Ok(())
    }

    /// Tells the server the roots changed. In 2026-07-28 there is nothing to tell (the server
    /// asks for the roots with each request that needs them): nothing is sent.
    pub async fn notify_roots_changed(&self) -> Result<(), ClientError> {
        if let Connection::Session(_) = &self.connection {
            self.peer.notify::<RootsListChangedNotification>(Default::default()).await?;
        }
        Ok(())
    }
}

/// A tool's JSON arguments as the object `tools/call` carries: an object, or `null` for none.
pub(crate) fn arguments_object(
    tool: &str,
    arguments: serde_json::Value,
) -> Result<Option<mcp_types::JsonObject>, ClientError> {
    match arguments {
        serde_json::Value::Object(m) => Ok(Some(m)),
        serde_json::Value::Null => Ok(None),
        other => Err(ClientError::InvalidArguments {
            tool: tool.to_owned(),
            detail: format!("arguments must be a JSON object, not {other}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paging_stops_at_a_repeated_cursor() {
        let mut pages = 0;
        let err = collect_pages("tools/list", |_cursor| {
            pages += 1;
            async { Ok::<_, ClientError>((vec![1], Some("again".to_owned()))) }
        })
        .await
        .unwrap_err();
        assert_eq!(pages, 2);
        assert!(
            matches!(&err, ClientError::Protocol { violation: Violation::RepeatedCursor(c), .. } if c == "again"),
            "{err}"
        );
        let mut next = 0;
        let all = collect_pages("tools/list", |_cursor| {
            next += 1;
            let cursor = (next < 3).then(|| next.to_string());
            async move { Ok::<_, ClientError>((vec![next], cursor)) }
        })
        .await
        .unwrap();
        assert_eq!(all, [1, 2, 3]);
    }

    #[tokio::test]
    async fn paging_stops_after_the_most_pages() {
        let mut pages = 0;
        let err = collect_pages("tools/list", |_cursor| {
            pages += 1;
            let cursor = pages.to_string();
            async move { Ok::<_, ClientError>((Vec::<u8>::new(), Some(cursor))) }
        })
        .await
        .unwrap_err();
        assert_eq!(pages, MAX_PAGES);
        assert!(
            matches!(&err, ClientError::Protocol { violation: Violation::EndlessPages(n), .. } if *n == MAX_PAGES),
            "{err}"
        );
    }
}
