//! The run's limits as the job object enforces them (and the one it
//! cannot), for the report.

use crate::policy::Policy;
use crate::report::LimitReport;

/// One line per limit; a limit Windows cannot enforce is a gap.
pub(super) fn reports(
    policy: &Policy,
    notes: &mut Vec<String>,
    gaps: &mut Vec<String>,
) -> Vec<LimitReport> {
    let l = &policy.limits;
    let src = |k: &str| {
        policy
            .sources
            .get(k)
            .cloned()
            .unwrap_or_else(|| "default".into())
    };
    let val = |v: Option<u64>, unit: &str| v.map_or("none".to_string(), |n| format!("{n} {unit}"));
    let mut limits = vec![
        LimitReport {
            name: "timeout".into(),
            value: val(l.timeout_secs, "s"),
            mechanism: "job terminated, exit 124".into(),
            source: src("timeout"),
        },
        LimitReport {
            name: "memory".into(),
            value: val(l.memory_mb, "MiB"),
            mechanism: "job: committed memory per process".into(),
            source: src("memory"),
        },
        LimitReport {
            name: "max_procs".into(),
            value: val(l.max_procs, ""),
            mechanism: "job: active processes".into(),
            source: src("max_procs"),
        },
    ];
    for x in &mut limits {
        x.value = x.value.trim_end().to_string();
    }
    if let Some(n) = l.max_file_size_mb {
        limits.push(LimitReport {
            name: "max_file_size".into(),
            value: format!("{n} MiB"),
            mechanism: "not enforced".into(),
            source: src("max_file_size"),
        });
        gaps.push("max_file_size is not enforced on Windows (no per-file size limit)".into());
    }
    if l.max_procs.is_some() {
        notes.push("max_procs counts processes, not threads, on Windows".into());
    }
    limits
}
