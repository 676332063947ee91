//! The registered items ([`Registry`]): the tools, prompts, resources and templates of a server,
//! with the lists as sent prepared once. The builder fills it, changes at runtime replace it,
//! and the serving reads a snapshot of it per request.

use hashbrown::HashMap;
use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

use super::prompt::PromptDef;
use super::resource::{ResourceDef, TemplateDef};
use super::tool::ToolDef;
use super::tool_schema::legacy_output_schema;
use crate::context::visibility::Item;

/// The registered items, with the lists as sent prepared once.
#[derive(Default, Clone)]
pub(crate) struct Registry {
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) tool_list: Vec<Tool>,
    /// The tools as clients of revisions before 2026-07-28 see them, when an output schema is
    /// not an object schema (empty otherwise: `tool_list` serves them too).
    pub(crate) legacy_tool_list: Vec<Tool>,
    pub(crate) tool_index: HashMap<String, usize>,
    pub(crate) prompts: Vec<PromptDef>,
    pub(crate) prompt_list: Vec<Prompt>,
    pub(crate) prompt_index: HashMap<String, usize>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) resource_list: Vec<Resource>,
    pub(crate) resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<TemplateDef>,
    pub(crate) template_list: Vec<ResourceTemplate>,
}

impl Registry {
    pub(crate) fn rebuild(&mut self) {
        self.tool_list = self.tools.iter().map(|t| t.tool.clone()).collect();
        self.legacy_tool_list = match self.tools.iter().any(|t| t.wraps_output) {
            false => Vec::new(),
            true => self
                .tools
                .iter()
                .map(|t| {
                    let mut tool = t.tool.clone();
                    if t.wraps_output {
                        tool.output_schema = tool.output_schema.as_ref().map(legacy_output_schema);
                    }
                    tool
                })
                .collect(),
        };
        self.tool_index = self.tools.iter().enumerate().map(|(i, t)| (t.tool.name.clone(), i)).collect();
        self.prompt_list = self.prompts.iter().map(|p| p.prompt.clone()).collect();
        self.prompt_index = self.prompts.iter().enumerate().map(|(i, p)| (p.prompt.name.clone(), i)).collect();
        self.resource_list = self.resources.iter().map(|r| r.resource.clone()).collect();
        self.resource_index = self.resources.iter().enumerate().map(|(i, r)| (r.resource.uri.clone(), i)).collect();
        self.template_list = self.templates.iter().map(|t| t.template.clone()).collect();
    }
    /// The tools as listed to a client of `version`.
    pub(crate) fn tool_list(&self, version: mcp_types::ProtocolVersion) -> &[Tool] {
        match version < mcp_types::ProtocolVersion::V2026_07_28 && !self.legacy_tool_list.is_empty() {
            true => &self.legacy_tool_list,
            false => &self.tool_list,
        }
    }
    pub(crate) fn prompt_list(&self, _: mcp_types::ProtocolVersion) -> &[Prompt] {
        &self.prompt_list
    }
    pub(crate) fn resource_list(&self, _: mcp_types::ProtocolVersion) -> &[Resource] {
        &self.resource_list
    }
    pub(crate) fn template_list(&self, _: mcp_types::ProtocolVersion) -> &[ResourceTemplate] {
        &self.template_list
    }
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tool_index.get(name).map(|i| &self.tools[*i])
    }
    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptDef> {
        self.prompt_index.get(name).map(|i| &self.prompts[*i])
    }
    pub(crate) fn resource(&self, uri: &str) -> Option<&ResourceDef> {
        self.resource_index.get(uri).map(|i| &self.resources[*i])
    }
    /// Whether `sees` shows something that serves `uri` (as `resources/read` finds it: the
    /// resource at `uri`, else a template that matches it); `None` when nothing serves it.
    pub(crate) fn serves_visibly(&self, uri: &str, sees: impl Fn(Item<'_>) -> bool) -> Option<bool> {
        let resource = self.resource(uri);
        if resource.is_some_and(|r| sees(r.item())) {
            return Some(true);
        }
        let mut served = resource.is_some();
        for template in self.templates.iter().filter(|t| t.pattern.matches(uri).is_some()) {
            if sees(template.item()) {
                return Some(true);
            }
            served = true;
        }
        served.then_some(false)
    }
}

impl ToolDef {
    /// The tool as the visibility predicate sees it.
    pub(crate) fn item(&self) -> Item<'_> {
        Item::Tool(&self.tool, &self.scopes)
    }
}

impl PromptDef {
    /// The prompt as the visibility predicate sees it.
    pub(crate) fn item(&self) -> Item<'_> {
        Item::Prompt(&self.prompt, &self.scopes)
    }
}

impl ResourceDef {
    /// The resource as the visibility predicate sees it.
    pub(crate) fn item(&self) -> Item<'_> {
        Item::Resource(&self.resource, &self.scopes)
    }
}

impl TemplateDef {
    /// The template as the visibility predicate sees it.
    pub(crate) fn item(&self) -> Item<'_> {
        Item::ResourceTemplate(&self.template, &self.scopes)
    }
}
