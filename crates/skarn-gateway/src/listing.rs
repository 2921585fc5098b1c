//! Reading a downstream server's listings with caps. A server that answers
//! `tools/list` (or resources, templates, prompts) with page after page
//! would otherwise grow the gateway without bound; past any cap the
//! listing fails with a [`ListError`] that names the cap and its setting.

use std::future::Future;

use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool};
use rmcp::service::{Peer, ServiceError};
use serde::Serialize;

/// Caps on one listing (one list method, all of its pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCaps {
    pub pages: usize,
    pub items: usize,
    pub bytes: usize,
}

impl Default for ListCaps {
    fn default() -> Self {
        ListCaps {
            pages: 100,
            items: 10_000,
            bytes: 16 << 20,
        }
    }
}

/// Why a listing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("{method} went past {max} pages (gateway.max_list_pages)")]
    Pages { method: &'static str, max: usize },
    #[error("{method} went past {max} items (gateway.max_list_items)")]
    Items { method: &'static str, max: usize },
    #[error("{method} went past {max} bytes (gateway.max_list_bytes)")]
    Bytes { method: &'static str, max: usize },
    #[error("{method} failed: {cause}")]
    Failed { method: &'static str, cause: String },
}

impl ListError {
    /// Whether a cap was hit (the server misbehaves), as opposed to a
    /// failed request.
    pub fn is_cap(&self) -> bool {
        !matches!(self, ListError::Failed { .. })
    }
}

/// Read every page of one list, within `caps`.
pub async fn collect<T, F, Fut>(
    method: &'static str,
    caps: ListCaps,
    mut page: F,
) -> Result<Vec<T>, ListError>
where
    T: Serialize,
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut bytes = 0usize;
    let mut cursor = None;
    for _ in 0..caps.pages {
        let (got, next) = page(cursor).await.map_err(|e| ListError::Failed {
            method,
            cause: crate::sync_util::short(e),
        })?;
        for it in &got {
            bytes += serde_json::to_vec(it).map_or(0, |v| v.len());
        }
        items.extend(got);
        if items.len() > caps.items {
            return Err(ListError::Items {
                method,
                max: caps.items,
            });
        }
        if bytes > caps.bytes {
            return Err(ListError::Bytes {
                method,
                max: caps.bytes,
            });
        }
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(items),
        }
    }
    Err(ListError::Pages {
        method,
        max: caps.pages,
    })
}

fn params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(cursor))
}

/// Most bytes of a tool's description kept from a listing (the rest is
/// dropped, with a note): with `gateway.max_list_items` and
/// `gateway.max_list_bytes` this bounds what a server's catalogue costs.
pub const MAX_DESCRIPTION_BYTES: usize = 16 << 10;

/// `tools/list`, every page.
/// Tools whose name is over 256 bytes or holds whitespace, control or
/// invisible formatting characters are left out
/// (`text_safe::bad_tool_name`), with a warning; descriptions are cut to
/// [`MAX_DESCRIPTION_BYTES`].
pub async fn tools(peer: &Peer<RoleClient>, caps: ListCaps) -> Result<Vec<Tool>, ListError> {
    let mut tools = collect("tools/list", caps, |c| async move {
        let r = peer.list_tools(params(c)).await?;
        Ok((r.tools, r.next_cursor))
    })
    .await?;
    tools.retain(|t| match crate::text_safe::bad_tool_name(&t.name) {
        None => true,
        Some(why) => {
            let server = peer
                .peer_info()
                .and_then(|i| {
                    i.server_info
                        .as_ref()
                        .map(|s| crate::text_safe::visible(&s.name))
                })
                .unwrap_or_default();
            tracing::warn!(
                "server {server:?} listed a tool named \"{}\", left out: {why}",
                crate::text_safe::visible(&t.name)
            );
            false
        }
    });
    for t in &mut tools {
        // Display strings (title, description, annotations, schema
        // texts) escaped as the search answers are (atk25c F5).
        crate::text_safe::visible_tool(t);
        if let Some(d) = &t.description
            && d.len() > MAX_DESCRIPTION_BYTES
        {
            let kept = crate::search::cut(d, MAX_DESCRIPTION_BYTES);
            t.description = Some(format!("{kept}... (cut: {} bytes in all)", d.len()).into());
        }
    }
    Ok(tools)
}

/// `resources/list`, every page.
pub async fn resources(
    peer: &Peer<RoleClient>,
    caps: ListCaps,
) -> Result<Vec<Resource>, ListError> {
    let mut items = collect("resources/list", caps, |c| async move {
        let r = peer.list_resources(params(c)).await?;
        Ok((r.resources, r.next_cursor))
    })
    .await?;
    items
        .iter_mut()
        .for_each(|r| crate::text_safe::visible_typed(r, &["uri"]));
    Ok(items)
}

/// `resources/templates/list`, every page.
pub async fn templates(
    peer: &Peer<RoleClient>,
    caps: ListCaps,
) -> Result<Vec<ResourceTemplate>, ListError> {
    let mut items = collect("resources/templates/list", caps, |c| async move {
        let r = peer.list_resource_templates(params(c)).await?;
        Ok((r.resource_templates, r.next_cursor))
    })
    .await?;
    items
        .iter_mut()
        .for_each(|r| crate::text_safe::visible_typed(r, &["uriTemplate"]));
    Ok(items)
}

/// `prompts/list`, every page.
pub async fn prompts(peer: &Peer<RoleClient>, caps: ListCaps) -> Result<Vec<Prompt>, ListError> {
    let mut items = collect("prompts/list", caps, |c| async move {
        let r = peer.list_prompts(params(c)).await?;
        Ok((r.prompts, r.next_cursor))
    })
    .await?;
    items
        .iter_mut()
        .for_each(|p| crate::text_safe::visible_typed(p, &["name"]));
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn endless_pages_stop_at_the_cap() {
        let caps = ListCaps {
            pages: 5,
            items: 1000,
            bytes: 1 << 20,
        };
        let e = collect("tools/list", caps, |_| async {
            Ok((vec![1u32], Some("more".to_owned())))
        })
        .await
        .unwrap_err();
        assert_eq!(
            e,
            ListError::Pages {
                method: "tools/list",
                max: 5
            }
        );
        let e = collect("tools/list", caps, |_| async {
            Ok(((0..600u32).collect(), Some("more".to_owned())))
        })
        .await
        .unwrap_err();
        assert!(matches!(e, ListError::Items { .. }), "{e}");
        let e = collect("tools/list", caps, |_| async {
            Ok((vec!["x".repeat(600_000); 2], None))
        })
        .await
        .unwrap_err();
        assert!(matches!(e, ListError::Bytes { .. }), "{e}");
        let ok = collect("tools/list", caps, |c| async move {
            Ok((
                vec![1u32],
                if c.is_none() { Some("2".into()) } else { None },
            ))
        })
        .await
        .unwrap();
        assert_eq!(ok, vec![1, 1]);
    }
}
