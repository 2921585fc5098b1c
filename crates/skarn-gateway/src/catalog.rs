//! Building the aggregated catalogue from every server's listing: the
//! names tools and prompts are offered under (prefixed, or their own with
//! `prefix = false` when free) and the search index.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::downstream::Downstream;
use crate::gateway::{Catalog, CatalogTool, Gateway};
use crate::search::{SearchDoc, SearchIndex, ServerBudget};

impl Gateway {
    /// Rebuild the catalogue and index from every server's listing.
    pub fn rebuild(&self) {
        let _one_at_a_time = self.rebuilding.lock().unwrap_or_else(|e| e.into_inner());
        let generation = self.dirty.load(Ordering::Acquire);
        let mut tools = Vec::new();
        let mut resources = Vec::new();
        let mut templates = Vec::new();
        let mut prompts = Vec::new();
        let mut prompt_names = Vec::new();
        // Names taken so far: every name the gateway offers itself, then
        // every prefixed name, so that an unprefixed name never shadows
        // another tool.
        let reserved = reserved_tool_names();
        let mut taken = reserved.clone();
        let listings: Vec<_> = self.servers.iter().map(|s| s.listing()).collect();
        let mut taken_prompts = HashSet::new();
        for (s, l) in self.servers.iter().zip(&listings) {
            if s.cfg.prefix {
                taken.extend(l.tools.iter().map(|t| self.qualify(s.alias(), &t.name)));
                taken_prompts.extend(l.prompts.iter().map(|p| self.qualify(s.alias(), &p.name)));
            }
        }
        for (s, l) in self.servers.iter().zip(&listings) {
            for t in &l.tools {
                let qualified = self.offered_name(s, &t.name, &mut taken);
                if reserved.contains(&qualified) {
                    // Only with a separator that spells a gateway tool
                    // ("read" + "_" + "tool_docs"): left out.
                    tracing::warn!(
                        server = %s.alias(),
                        "tool {:?} left out: its name {qualified:?} is one the gateway offers itself",
                        crate::text_safe::visible(&t.name)
                    );
                    continue;
                }
                tools.push(CatalogTool {
                    server: s.index,
                    qualified,
                    tool: t.clone(),
                });
            }
            resources.extend(l.resources.iter().map(|r| (s.index, r.clone())));
            templates.extend(l.templates.iter().map(|r| (s.index, r.clone())));
            for p in &l.prompts {
                prompt_names.push(self.offered_name(s, &p.name, &mut taken_prompts));
                prompts.push((s.index, p.clone()));
            }
        }
        let docs = search_docs(&tools, |i| self.servers[i].alias());
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.qualified.clone(), i))
            .collect();
        let prompt_by_name = prompt_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let catalog = Catalog {
            generation,
            index: SearchIndex::build(&docs),
            tools,
            by_name,
            resources,
            templates,
            prompts,
            prompt_names,
            prompt_by_name,
        };
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(catalog);
    }

    fn qualify(&self, alias: &str, name: &str) -> String {
        format!("{alias}{}{name}", self.config.gateway.namespace_separator)
    }
}

/// The search documents of `tools`, each server's within its budget
/// ([`ServerBudget`]): a server with a huge catalogue has the rest of it
/// indexed by name and parameters only (with a warning).
fn search_docs<'a>(tools: &[CatalogTool], alias: impl Fn(usize) -> &'a str) -> Vec<SearchDoc> {
    let mut budgets: Vec<ServerBudget> = Vec::new();
    let docs = tools
        .iter()
        .map(|t| {
            if budgets.len() <= t.server {
                budgets.resize_with(t.server + 1, ServerBudget::default);
            }
            budgets[t.server].doc(
                alias(t.server),
                &t.tool.name,
                t.tool.description.as_deref().unwrap_or(""),
                t.tool
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|p| p.keys().map(String::as_str)),
            )
        })
        .collect();
    for (i, b) in budgets.iter().enumerate() {
        if b.cut > 0 {
            tracing::warn!(
                server = %alias(i),
                "{} tool descriptions were cut or left out of the search index (its budget per tool and per server)",
                b.cut
            );
        }
    }
    docs
}

/// Every tool name the gateway may offer itself (`run` whether or not the
/// shell tool is on): no downstream tool is ever offered under one.
pub(crate) fn reserved_tool_names() -> HashSet<String> {
    crate::server::meta_tools()
        .into_iter()
        .map(|t| t.name.to_string())
        .chain([crate::shell_tool::NAME.to_owned()])
        .collect()
}

impl Gateway {
    /// The name a server's tool or prompt is offered under: prefixed, or
    /// with `prefix = false` its own name unless that is taken.
    fn offered_name(&self, s: &Downstream, name: &str, taken: &mut HashSet<String>) -> String {
        if !s.cfg.prefix && taken.insert(name.to_owned()) {
            return name.to_owned();
        }
        let q = self.qualify(s.alias(), name);
        taken.insert(q.clone());
        q
    }

    /// The current catalogue (rebuilt first if a listing changed).
    pub fn catalog(&self) -> Arc<Catalog> {
        let current = self
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if current.generation >= self.dirty.load(Ordering::Acquire) {
            return current;
        }
        self.rebuild();
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
