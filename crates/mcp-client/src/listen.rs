//! `subscriptions/listen` (2026-07-28): long-lived streams of change notifications, and the
//! routing of the server's notifications to them.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_jsonrpc::message::{self, Notification};
use mcp_jsonrpc::{CallError, CallOptions, CancellationToken, Peer};
use mcp_types::{
    CancelledNotificationParams, RequestId, SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequest,
};
use tokio::sync::{mpsc, oneshot};

use crate::error::{ClientError, Violation};
use crate::wire::event::{ServerEvent, decode, event_of};
use crate::wire::stateless::{Json, RequestMeta, STATELESS};
use crate::wire::tasks::declare_tasks;

/// Why a subscription ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionEnd {
    /// The client closed it (dropped the [`Subscription`], or closed the connection).
    Closed,
    /// The server ended it gracefully (it answered the `subscriptions/listen` request).
    Completed,
    /// The server tore it down (`notifications/cancelled`).
    Cancelled,
    /// The request failed (an error answer, the stream or the connection broke).
    Failed(String),
}

type Opening = Arc<Mutex<Option<oneshot::Sender<Result<SubscriptionFilter, ClientError>>>>>;

/// Where a subscription's notifications go.
#[derive(Clone)]
pub(crate) enum Sink {
    /// To a [`Subscription`].
    Channel { tx: mpsc::Sender<ServerEvent>, missed: Arc<AtomicU64> },
    /// To the client's events (the subscription `Client::subscribe` keeps).
    Events,
}

struct Entry {
    sink: Sink,
    opening: Opening,
    cancel: CancellationToken,
    end: Arc<Mutex<Option<SubscriptionEnd>>>,
}

/// The open subscriptions, by id (the id of their `subscriptions/listen` request).
#[derive(Default)]
pub(crate) struct Registry {
    entries: Mutex<HashMap<RequestId, Entry>>,
}

impl Registry {
    /// Handles a notification of subscription `id`; `false` if there is no such subscription.
    pub(crate) fn deliver(&self, id: &RequestId, n: &Notification, emit: &dyn Fn(ServerEvent)) -> bool {
        let (sink, opening) = {
            let entries = self.entries.lock_unpoisoned();
            let Some(entry) = entries.get(id) else { return false };
            (entry.sink.clone(), entry.opening.clone())
        };
        if n.method == "notifications/subscriptions/acknowledged" {
            if let Some(ack) = decode::<SubscriptionsAcknowledgedNotificationParams>(n)
                && let Some(tx) = opening.lock_unpoisoned().take()
            {
                let _ = tx.send(Ok(ack.notifications));
            }
            return true;
        }
        let Some(event) = event_of(n) else {
            tracing::debug!(method = %n.method, %id, "unexpected notification on a subscription");
            return true;
        };
        match sink {
            Sink::Channel { tx, missed } => {
                if tx.try_send(event).is_err() {
                    missed.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(%id, "a subscription's reader is not keeping up; a notification was dropped");
                }
            }
            Sink::Events => emit(event),
        }
        true
    }

    /// The server tore subscription `id` down; `false` if there is no such subscription.
    pub(crate) fn server_cancelled(&self, n: &Notification) -> bool {
        let Ok(CancelledNotificationParams { request_id: Some(id), .. }) =
            message::decode_params::<CancelledNotificationParams>(n.params.as_deref())
        else {
            return false;
        };
        let entries = self.entries.lock_unpoisoned();
        let Some(entry) = entries.get(&id) else { return false };
        entry.end.lock_unpoisoned().get_or_insert(SubscriptionEnd::Cancelled);
        entry.cancel.cancel();
        true
    }

    fn insert(&self, id: RequestId, entry: Entry) {
        self.entries.lock_unpoisoned().insert(id, entry);
    }

    fn remove(&self, id: &RequestId) {
        self.entries.lock_unpoisoned().remove(id);
    }
}

/// Cancels a token when dropped.
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// An open subscription, however its notifications are delivered.
pub(crate) struct Opened {
    pub(crate) id: RequestId,
    pub(crate) acknowledged: SubscriptionFilter,
    /// Ends the subscription when the handle goes.
    _guard: CancelOnDrop,
    end: Arc<Mutex<Option<SubscriptionEnd>>>,
}

impl Opened {
    /// Why it ended, if it did.
    pub(crate) fn ended(&self) -> Option<SubscriptionEnd> {
        self.end.lock_unpoisoned().clone()
    }
}

/// Sends `subscriptions/listen` with `params` (declaring the tasks extension with `tasks`)
/// and waits (at most `ack_timeout`) for its acknowledgment.
pub(crate) async fn open(
    peer: &Peer,
    meta: &RequestMeta,
    registry: &Arc<Registry>,
    mut params: mcp_types::JsonObject,
    tasks: bool,
    sink: Sink,
    ack_timeout: Duration,
) -> Result<Opened, ClientError> {
    meta.apply(&mut params, STATELESS.as_str());
    if tasks {
        declare_tasks(&mut params);
    }
    let (open_tx, open_rx) = oneshot::channel();
    let opening: Opening = Arc::new(Mutex::new(Some(open_tx)));
    let cancel = CancellationToken::new();
    let guard = CancelOnDrop(cancel.clone());
    let end: Arc<Mutex<Option<SubscriptionEnd>>> = Arc::default();
    let id_slot: Arc<Mutex<Option<RequestId>>> = Arc::default();
    let mut options = {
        let registry = registry.clone();
        let entry_opening = opening.clone();
        let entry_cancel = cancel.clone();
        let entry_end = end.clone();
        let id_slot = id_slot.clone();
        CallOptions::default().unbounded().cancel_on(cancel.clone()).on_id(move |id| {
            let entry = Entry {
                sink: sink.clone(),
                opening: entry_opening.clone(),
                cancel: entry_cancel.clone(),
                end: entry_end.clone(),
            };
            registry.insert(id.clone(), entry);
            *id_slot.lock_unpoisoned() = Some(id.clone());
        })
    };
    options.hints = meta.hints("subscriptions/listen", &params);
    let id_cell = id_slot.clone();
    let task = {
        let peer = peer.clone();
        let registry = registry.clone();
        let end = end.clone();
        let opening = opening.clone();
        async move {
            let outcome = peer.request::<Json<SubscriptionsListenRequest>>(params, options).await;
            let (reason, error) = match outcome {
                Ok(_) => (
                    SubscriptionEnd::Completed,
                    ClientError::protocol("subscriptions/listen", Violation::UnacknowledgedSubscription),
                ),
                Err(CallError::Cancelled) => (SubscriptionEnd::Closed, ClientError::Cancelled),
                Err(e) => {
                    let e = ClientError::from(e);
                    (SubscriptionEnd::Failed(e.to_string()), e)
                }
            };
            // The reason first: removing the entry drops the sender, which ends the stream,
            // and whoever sees it end may ask why at once.
            end.lock_unpoisoned().get_or_insert(reason);
            let id = id_slot.lock_unpoisoned().clone();
            if let Some(id) = id {
                registry.remove(&id);
            }
            if let Some(tx) = opening.lock_unpoisoned().take() {
                let _ = tx.send(Err(error));
            }
        }
    };
    tokio::spawn(task);
    match tokio::time::timeout(ack_timeout, open_rx).await {
        Ok(Ok(Ok(acknowledged))) => {
            let id = id_cell.lock_unpoisoned().clone().unwrap_or(RequestId::Integer(-1));
            Ok(Opened { id, acknowledged, _guard: guard, end })
        }
        Ok(Ok(Err(e))) => Err(e),
        Ok(Err(_)) => Err(ClientError::Closed(None)),
        Err(_) => Err(ClientError::Timeout { method: "subscriptions/listen".to_owned(), elapsed: ack_timeout }),
    }
}

/// An open `subscriptions/listen` stream (2026-07-28), from [`Client::listen`](crate::Client::listen).
///
/// It yields the change notifications the server sends on it, as [`ServerEvent`]s (list
/// changes, resource updates), through [`Subscription::next`] or as a
/// [`Stream`](futures_util::Stream); `None` once it ended ([`Subscription::ended`] says why).
/// Dropping it (or [`Subscription::close`]) ends the subscription: over HTTP its response stream
/// is closed, over stdio `notifications/cancelled` is sent.
pub struct Subscription {
    opened: Opened,
    rx: mpsc::Receiver<ServerEvent>,
    missed: Arc<AtomicU64>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.opened.id)
            .field("acknowledged", &self.opened.acknowledged)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    pub(crate) fn new(opened: Opened, rx: mpsc::Receiver<ServerEvent>, missed: Arc<AtomicU64>) -> Self {
        Subscription { opened, rx, missed }
    }

    /// The subscription's id: the id of its `subscriptions/listen` request, which every
    /// notification on it carries.
    pub fn id(&self) -> &RequestId {
        &self.opened.id
    }

    /// What the server agreed to send (a subset of what was asked: notification types it
    /// does not support are left out).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.opened.acknowledged
    }

    /// The next notification; `None` once the subscription ended and every notification
    /// received before was read.
    pub async fn next(&mut self) -> Option<ServerEvent> {
        self.rx.recv().await
    }

    /// Why the subscription ended; `None` while it is open.
    pub fn ended(&self) -> Option<SubscriptionEnd> {
        self.opened.ended()
    }

    /// Notifications dropped because they were not read fast enough (the queue holds
    /// `ClientBuilder::events_capacity` of them).
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// Ends the subscription (as dropping it does).
    pub fn close(self) {}
}

impl futures_util::Stream for Subscription {
    type Item = ServerEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerEvent>> {
        self.rx.poll_recv(cx)
    }
}
