//! Items added and removed at runtime: the registry is copied, changed and swapped in
//! (requests in flight keep the snapshot they took), and connected clients are told.

use mcp_jsonrpc::sync::RwLockExt as _;
use std::sync::Arc;

use mcp_types::{
    PromptListChangedNotification, ResourceListChangedNotification, ServerCapabilities, ToolListChangedNotification,
};

use super::Server;
use crate::bus::ListChanged;
use crate::def::prompt::PromptDef;
use crate::def::registry::Registry;
use crate::def::resource::{ResourceDef, TemplateDef};
use crate::def::tool::ToolDef;
use crate::error::DefinitionError;

impl Server {
    /// Applies `change` to a copy of the registry and swaps it in (requests in flight keep the
    /// snapshot they took).
    fn update<R>(&self, change: impl FnOnce(&mut Registry) -> R) -> R {
        let mut guard = self.shared.registry.write_unpoisoned();
        let mut next = Registry::clone(&guard);
        let out = change(&mut next);
        next.rebuild();
        // Before the swap, under the lock: a request that sees the new generation reads the
        // new registry (see `middleware::cache`).
        self.shared.lists_generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        *guard = Arc::new(next);
        out
    }

    /// Adds a tool (or replaces the one of the same name) and tells connected clients.
    ///
    /// The server must declare the tools capability: built with a tool, or with
    /// [`ServerBuilder::enable_tools`](crate::ServerBuilder::enable_tools).
    pub async fn add_tool(&self, mut tool: ToolDef) -> Result<(), DefinitionError> {
        if self.shared.check_structured_content {
            tool.compile_output_check()?;
        }
        self.add(tool).await
    }

    /// Removes a tool and tells connected clients; whether it existed.
    pub async fn remove_tool(&self, name: &str) -> bool {
        self.remove::<ToolDef>(name).await
    }

    /// Adds a prompt (or replaces the one of the same name) and tells connected clients.
    ///
    /// The server must declare the prompts capability: built with a prompt, or with
    /// [`ServerBuilder::enable_prompts`](crate::ServerBuilder::enable_prompts).
    pub async fn add_prompt(&self, prompt: PromptDef) -> Result<(), DefinitionError> {
        prompt.check()?;
        self.add(prompt).await
    }

    /// Removes a prompt and tells connected clients; whether it existed.
    pub async fn remove_prompt(&self, name: &str) -> bool {
        self.remove::<PromptDef>(name).await
    }

    /// Adds a resource (or replaces the one at the same URI) and tells connected clients.
    ///
    /// The server must declare the resources capability: built with a resource or template, or
    /// with [`ServerBuilder::enable_resources`](crate::ServerBuilder::enable_resources).
    pub async fn add_resource(&self, resource: ResourceDef) -> Result<(), DefinitionError> {
        resource.check_uri()?;
        self.add(resource).await
    }

    /// Removes a resource and tells connected clients; whether it existed.
    pub async fn remove_resource(&self, uri: &str) -> bool {
        self.remove::<ResourceDef>(uri).await
    }

    /// Adds a resource template (or replaces the one of the same URI template) and tells
    /// connected clients (`notifications/resources/list_changed`; 2026-07-28
    /// `subscriptions/listen` streams that asked for resource list changes hear of it too).
    ///
    /// The server must declare the resources capability: built with a resource or template, or
    /// with [`ServerBuilder::enable_resources`](crate::ServerBuilder::enable_resources).
    ///
    /// ```
    /// use mcp_server::{Server, TemplateDef};
    /// use mcp_types::{ErrorObject, TextResourceContents};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let server = Server::builder("notes", "1.0").enable_resources().build().unwrap();
    /// let note = TemplateDef::new("note", "notes://{id}", |uri, vars, _ctx| async move {
    ///     Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, format!("note {}", vars["id"])).into()])
    /// })
    /// .unwrap();
    /// server.add_resource_template(note).await.unwrap();
    /// assert_eq!(server.resource_templates()[0].uri_template, "notes://{id}");
    /// assert!(server.remove_resource_template("notes://{id}").await);
    /// assert!(server.resource_templates().is_empty());
    /// # });
    /// ```
    pub async fn add_resource_template(&self, template: TemplateDef) -> Result<(), DefinitionError> {
        self.add(template).await
    }

    /// Removes the resource template of `uri_template` (as written in its definition) and
    /// tells connected clients; whether it existed.
    pub async fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.remove::<TemplateDef>(uri_template).await
    }

    /// Adds `item` (or replaces the one of the same key) and tells connected clients.
    async fn add<T: Item>(&self, item: T) -> Result<(), DefinitionError> {
        declared(T::CAPABILITY, T::declared(&self.shared.capabilities))?;
        self.update(|r| upsert(T::items(r), item, |a, b| a.key() == b.key()));
        self.broadcast::<T::Changed>().await;
        Ok(())
    }

    /// Removes the item of `key` and tells connected clients; whether it existed.
    async fn remove<T: Item>(&self, key: &str) -> bool {
        let found = self.update(|r| remove_where(T::items(r), |x| x.key() == key));
        if found {
            self.broadcast::<T::Changed>().await;
        }
        found
    }
}

/// A kind of item added and removed at runtime: where the registry keeps it, what identifies
/// it, the capability that declares its kind, and the notification of its list's changes.
trait Item: Sized {
    /// `tools`, `prompts` or `resources`.
    const CAPABILITY: &'static str;
    /// The notification that its list changed.
    type Changed: ListChanged;
    /// Whether `capabilities` declare its kind.
    fn declared(capabilities: &ServerCapabilities) -> bool;
    /// Its list in `registry`.
    fn items(registry: &mut Registry) -> &mut Vec<Self>;
    /// Its name (or URI), unique in its list.
    fn key(&self) -> &str;
}

/// `impl Item for $def`: its capability, notification, list in the registry and key.
macro_rules! item {
    ($def:ty, $capability:ident, $changed:ty, $list:ident, $($key:ident).+) => {
        impl Item for $def {
            const CAPABILITY: &'static str = stringify!($capability);
            type Changed = $changed;
            fn declared(capabilities: &ServerCapabilities) -> bool {
                capabilities.$capability.is_some()
            }
            fn items(registry: &mut Registry) -> &mut Vec<Self> {
                &mut registry.$list
            }
            fn key(&self) -> &str {
                &self.$($key).+
            }
        }
    };
}

item!(ToolDef, tools, ToolListChangedNotification, tools, tool.name);
item!(PromptDef, prompts, PromptListChangedNotification, prompts, prompt.name);
item!(ResourceDef, resources, ResourceListChangedNotification, resources, resource.uri);
item!(TemplateDef, resources, ResourceListChangedNotification, templates, template.uri_template);

/// Clients were told at connection what the server has: an item of a kind it did not declare
/// could be neither listed nor called.
fn declared(capability: &'static str, declared: bool) -> Result<(), DefinitionError> {
    if declared { Ok(()) } else { Err(DefinitionError::NotDeclared { capability }) }
}

/// Puts `item` in place of the one `same` matches (keeping the list's order), or at the end.
fn upsert<T>(items: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match items.iter().position(|x| same(x, &item)) {
        Some(i) => items[i] = item,
        None => items.push(item),
    }
}

/// Removes the items `hit` matches; whether there were any.
fn remove_where<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|x| !hit(x));
    items.len() != before
}
