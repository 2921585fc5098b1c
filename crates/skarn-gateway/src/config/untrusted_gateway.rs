//! The `[gateway]` settings of an untrusted file: every bound (Code Mode's
//! memory, stack, deadline, tool calls and output; workers; timeouts;
//! listing, queue and rate caps) applies only when it is at most the
//! default, so the file can narrow them and never widen them; switches
//! that weaken a check (requests from idle servers, extra HTTP host names)
//! are off. (`shell` stays: the `run` tool is confined to the file's
//! directory, ADR 0067.)

use super::gateway_section::GatewayConfig;

/// Clamp what widens to the defaults; the key of each setting ignored.
pub(super) fn narrow(g: &mut GatewayConfig) -> Vec<String> {
    let d = GatewayConfig::default();
    let mut out: Vec<String> = Vec::new();
    let mut cap = |key: &str, v: &mut usize, max: usize| {
        if *v > max {
            *v = max;
            out.push(key.to_owned());
        }
    };
    let (l, dl) = (&mut g.limits, &d.limits);
    cap(
        "[gateway.limits] memory",
        &mut l.memory_bytes,
        dl.memory_bytes,
    );
    cap("[gateway.limits] stack", &mut l.stack_bytes, dl.stack_bytes);
    cap(
        "[gateway.limits] max_output",
        &mut l.max_output_bytes,
        dl.max_output_bytes,
    );
    cap(
        "[gateway.limits] max_log_lines",
        &mut l.max_log_lines,
        dl.max_log_lines,
    );
    cap(
        "[gateway.limits] max_log_bytes",
        &mut l.max_log_bytes,
        dl.max_log_bytes,
    );
    cap("[gateway] worker_pool", &mut g.worker_pool, d.worker_pool);
    cap(
        "[gateway] max_concurrent_executes",
        &mut g.max_concurrent_executes,
        d.max_concurrent_executes,
    );
    cap(
        "[gateway] max_list_pages",
        &mut g.max_list_pages,
        d.max_list_pages,
    );
    cap(
        "[gateway] max_list_items",
        &mut g.max_list_items,
        d.max_list_items,
    );
    cap(
        "[gateway] max_list_bytes",
        &mut g.max_list_bytes,
        d.max_list_bytes,
    );
    cap(
        "[gateway] http_max_connections",
        &mut g.http_max_connections,
        d.http_max_connections,
    );
    cap(
        "[gateway] max_client_requests_in_flight",
        &mut g.max_client_requests_in_flight,
        d.max_client_requests_in_flight,
    );
    cap(
        "[gateway] max_queued_notifications",
        &mut g.max_queued_notifications,
        d.max_queued_notifications,
    );
    cap(
        "[gateway] max_queued_notification_bytes",
        &mut g.max_queued_notification_bytes,
        d.max_queued_notification_bytes,
    );
    cap(
        "[gateway] max_pending_server_writes",
        &mut g.max_pending_server_writes,
        d.max_pending_server_writes,
    );
    if g.limits.deadline > d.limits.deadline {
        g.limits.deadline = d.limits.deadline;
        out.push("[gateway.limits] timeout".into());
    }
    if g.limits.max_tool_calls > d.limits.max_tool_calls {
        g.limits.max_tool_calls = d.limits.max_tool_calls;
        out.push("[gateway.limits] max_tool_calls".into());
    }
    for (key, v, max) in [
        (
            "client_requests_per_minute",
            &mut g.client_requests_per_minute,
            d.client_requests_per_minute,
        ),
        (
            "server_requests_per_second",
            &mut g.server_requests_per_second,
            d.server_requests_per_second,
        ),
    ] {
        if *v > max {
            *v = max;
            out.push(format!("[gateway] {key}"));
        }
    }
    for (key, v, max) in [
        ("start_timeout", &mut g.start_timeout, d.start_timeout),
        ("call_timeout", &mut g.call_timeout, d.call_timeout),
        (
            "http_header_timeout",
            &mut g.http_header_timeout,
            d.http_header_timeout,
        ),
        (
            "http_idle_timeout",
            &mut g.http_idle_timeout,
            d.http_idle_timeout,
        ),
        (
            "client_request_timeout",
            &mut g.client_request_timeout,
            d.client_request_timeout,
        ),
    ] {
        if *v > max {
            *v = max;
            out.push(format!("[gateway] {key}"));
        }
    }
    if g.client_requests_from_idle_servers {
        g.client_requests_from_idle_servers = false;
        out.push("[gateway] client_requests_from_idle_servers".into());
    }
    if !g.http_allowed_hosts.is_empty() {
        g.http_allowed_hosts.clear();
        out.push("[gateway] http_allowed_hosts".into());
    }
    out.iter_mut().for_each(|k| {
        if !k.contains('(') {
            k.push_str(" above the default (the default is used)");
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_narrower_bounds_stay() {
        let mut g = GatewayConfig::default();
        g.limits.memory_bytes = 2 << 30;
        g.limits.deadline = std::time::Duration::from_secs(7200);
        g.limits.max_output_bytes = 512 << 20;
        g.call_timeout = 5.0;
        let notes = narrow(&mut g);
        let d = GatewayConfig::default();
        assert_eq!(g.limits, d.limits);
        assert_eq!(g.call_timeout, 5.0, "a narrower bound stays");
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("memory"), "{notes:?}");
    }
}
